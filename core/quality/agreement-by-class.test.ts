import { agreementByClass } from './agreement-by-class';
import { computeAgreement, type AgreementAnnotation } from './agreement';

const a = (
  annotator: string,
  frame_id: string,
  cls: string,
  bbox: [number, number, number, number],
): AgreementAnnotation => ({
  annotator,
  frame_id,
  class: cls,
  bbox,
});

describe('per-class agreement', () => {
  it('counts units a class appears in, those all agree on, unmatched objects and mean IoU of same-class matches', () => {
    const annotations = [
      a('A', 'f1', 'car', [0, 0, 10, 10]),
      a('B', 'f1', 'car', [0, 0, 10, 11]),
      a('C', 'f1', 'car', [0, 0, 10, 10]),
      a('A', 'f1', 'bus', [50, 50, 80, 80]),
      a('B', 'f1', 'truck', [50, 50, 80, 80]),
      a('C', 'f1', 'bus', [50, 50, 80, 80]),
      a('A', 'f2', 'bus', [0, 0, 5, 5]),
    ];
    const by = agreementByClass({ annotations });
    expect(by.car).toEqual({ units: 1, agreed: 1, agreement: 1, unmatched: 0, mean_iou: expect.any(Number) });
    expect(by.car!.mean_iou).toBeCloseTo((10 / 11 + 1 + 10 / 11) / 3);
    expect(by.bus).toMatchObject({ units: 1, agreed: 0, agreement: 0, unmatched: 1, mean_iou: 1 });
    expect(by.truck).toMatchObject({ units: 1, agreed: 0, agreement: 0, unmatched: 0, mean_iou: null });
    // The pooled report is computed on the same matching.
    expect(computeAgreement({ annotations }).counts.units).toBe(3);
  });
});
