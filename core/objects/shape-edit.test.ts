import { InputError } from '../errors';
import { normaliseShape } from '../geometry';
import { applyShapeEdit, shapeEditFields, type StoredShape } from './shape-edit';

const frame = { width: 100, height: 50 };
const axisAligned: StoredShape = {
  bbox: [10, 10, 30, 30],
  rbox: null,
  rot_deg: 0,
  polyline: null,
  keypoints: null,
};

describe('a geometry edit of an existing object', () => {
  it('names only the fields a request carries; null counts, absent does not', () => {
    expect(shapeEditFields({})).toEqual([]);
    expect(shapeEditFields({ polyline: null, rot_deg: 0 })).toEqual(['rot_deg', 'polyline']);
  });

  it('reads a new box with rot_deg as the box before rotation, as normaliseShape does on create', () => {
    const edit = applyShapeEdit(axisAligned, { bbox: [40, 20, 60, 30], rot_deg: 45 }, null, frame);
    const created = normaliseShape({ bbox: [40, 20, 60, 30], rot_deg: 45 }, frame);
    expect(edit.shape).toEqual({
      bbox: created.bbox,
      rbox: [40, 20, 60, 30],
      rot_deg: 45,
      polyline: null,
      keypoints: null,
    });
    expect(edit.changed).toEqual(['bbox', 'rbox', 'rot_deg']);
    expect(edit.clipped).toBe(false);
  });

  it('keeps the rotation and the box before rotation when only other shapes change', () => {
    const rotated = applyShapeEdit(axisAligned, { bbox: [40, 20, 60, 30], rot_deg: 90 }, null, frame).shape;
    const edit = applyShapeEdit(rotated, { keypoints: { nose: [50, 25, 2] } }, null, frame);
    expect(edit.shape).toMatchObject({
      rbox: [40, 20, 60, 30],
      rot_deg: 90,
      keypoints: { nose: [50, 25, 2] },
    });
    expect(edit.shape.bbox).toEqual(rotated.bbox);
    expect(edit.changed).toEqual(['keypoints']);
    // rot_deg 0 straightens it back to the box it was drawn as.
    const straight = applyShapeEdit(rotated, { rot_deg: 0 }, null, frame);
    expect(straight.shape).toMatchObject({ bbox: [40, 20, 60, 30], rbox: null, rot_deg: 0 });
  });

  it('grows the bbox over new shapes, the untouched mask and the shapes it keeps', () => {
    const mask = [[5, 5, 12, 5, 12, 12]];
    const withLine = applyShapeEdit(axisAligned, { polyline: [[20, 20, 80, 45]] }, mask, frame);
    expect(withLine.shape).toMatchObject({ bbox: [5, 5, 80, 45], polyline: [[20, 20, 80, 45]] });
    expect(withLine.changed).toEqual(['bbox', 'polyline']);
    // A new box still encloses the kept polyline and the mask.
    const moved = applyShapeEdit(withLine.shape, { bbox: [30, 30, 40, 40] }, mask, frame);
    expect(moved.shape.bbox).toEqual([5, 5, 80, 45]);
    expect(moved.shape.polyline).toEqual([[20, 20, 80, 45]]);
  });

  it('removes a polyline or keypoints on null and keeps them when absent', () => {
    const drawn: StoredShape = { ...axisAligned, polyline: [[12, 12, 20, 20]], keypoints: { a: [15, 15] } };
    expect(applyShapeEdit(drawn, { polyline: null }, null, frame).shape).toMatchObject({
      polyline: null,
      keypoints: { a: [15, 15] },
    });
    const gone = applyShapeEdit(drawn, { keypoints: null }, null, frame);
    expect(gone.shape).toMatchObject({ polyline: [[12, 12, 20, 20]], keypoints: null });
    expect(gone.changed).toEqual(['keypoints']);
  });

  it('clips to the frame and refuses what a create refuses', () => {
    const clipped = applyShapeEdit(axisAligned, { bbox: [90, 40, 120, 60] }, null, frame);
    expect(clipped).toMatchObject({ shape: { bbox: [90, 40, 100, 50] }, clipped: true });
    expect(() => applyShapeEdit(axisAligned, { bbox: [200, 0, 300, 10] }, null, frame)).toThrow(/outside/);
    expect(() => applyShapeEdit(axisAligned, { keypoints: { a: [150, 10] } }, null, frame)).toThrow(
      InputError,
    );
    expect(() => applyShapeEdit(axisAligned, { polyline: [[1, 1]] }, null, frame)).toThrow(/at least 2/);
  });

  it('compares keypoints by content, not by key order', () => {
    const drawn: StoredShape = { ...axisAligned, keypoints: { b: [12, 12], a: [14, 14] } };
    expect(applyShapeEdit(drawn, { keypoints: { a: [14, 14], b: [12, 12] } }, null, frame).changed).toEqual(
      [],
    );
  });
});
