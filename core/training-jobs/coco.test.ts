import { COCO_CLASSES } from '../detect/coco-ontology';
import { classMapOf, parentClassIndex, trainingItems, type CocoSplitFile } from './coco';

describe('parentClassIndex', () => {
  it("maps an ontology class to the parent's COCO index, and says why when it cannot", () => {
    expect(parentClassIndex('car')).toEqual({ index: COCO_CLASSES.indexOf('car') });
    expect(parentClassIndex('traffic_sign')).toEqual({ index: COCO_CLASSES.indexOf('stop sign') });
    expect(parentClassIndex('pothole')).toEqual({ reason: expect.stringMatching(/no class for it/) });
    expect(parentClassIndex('animal')).toEqual({
      reason: expect.stringMatching(/ambiguous: .*bear, zebra, giraffe/),
    });
  });
});

describe('trainingItems', () => {
  const file: CocoSplitFile = {
    images: [
      { id: 1, file_name: 'f1.jpg' },
      { id: 2, file_name: 'f2.jpg' },
    ],
    annotations: [
      { image_id: 1, category_id: 3, bbox: [10, 20, 30, 40] },
      { image_id: 1, category_id: 99, bbox: [0, 0, 5, 5] },
      { image_id: 2, category_id: 3, bbox: [5, 5, 0, 10] },
      { image_id: 7, category_id: 3, bbox: [1, 1, 2, 2] },
    ],
    categories: [
      { id: 3, name: 'car' },
      { id: 99, name: 'pothole' },
    ],
  };

  it('keeps every image, trains mapped boxes as [x1, y1, x2, y2], and counts what it leaves out', () => {
    const { classMap, unmapped } = classMapOf([file]);
    expect(classMap).toEqual({ car: 2 });
    expect(Object.keys(unmapped)).toEqual(['pothole']);
    const out = trainingItems(file, classMap);
    expect(out.items).toEqual([
      { fileName: 'f1.jpg', boxes: [{ bbox: [10, 20, 40, 60], classIndex: 2 }] },
      { fileName: 'f2.jpg', boxes: [] },
    ]);
    expect(out.boxes).toBe(1);
    expect(out.skipped).toEqual({ pothole: 1, 'car (no area)': 1, 'car (no such image)': 1 });
  });
});
