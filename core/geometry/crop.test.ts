import { cropRegion } from './crop';

describe('cropRegion', () => {
  it('pads the box, scales frame coordinates to the image, and stays inside it', () => {
    expect(
      cropRegion([100, 100, 200, 150], 0.1, { width: 1000, height: 500 }, { width: 1000, height: 500 }),
    ).toEqual({ left: 90, top: 95, width: 120, height: 60 });
    expect(
      cropRegion([100, 100, 200, 150], 0.1, { width: 1000, height: 500 }, { width: 500, height: 250 }),
    ).toEqual({ left: 45, top: 47, width: 60, height: 31 });
    expect(
      cropRegion([0, 0, 1000, 500], 0.5, { width: 1000, height: 500 }, { width: 1000, height: 500 }),
    ).toEqual({ left: 0, top: 0, width: 1000, height: 500 });
  });

  it('never yields an empty region', () => {
    expect(
      cropRegion([10, 10, 10.2, 10.2], 0, { width: 100, height: 100 }, { width: 100, height: 100 }),
    ).toMatchObject({ width: 1, height: 1 });
  });
});
