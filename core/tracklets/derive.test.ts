import type { Box } from '../geometry/boxes';
import { deriveAttributes, DERIVE_RULES_VERSION, type DerivePoint } from './derive';

/** 30×40 boxes (diagonal 50 px) scaled by `s`, on a 640×480 frame, at 3 fps. */
const track = (
  centres: Array<[number, number, number?]>,
  size: [number | null, number | null] = [640, 480],
) =>
  centres.map(([x, y, s = 1], i): DerivePoint => ({
    frame_id: `f${i}`,
    frame_index: i,
    ts_ms: (i * 1000) / 3,
    object_id: `o${i}`,
    box: [x - 15 * s, y - 20 * s, x + 15 * s, y + 20 * s] as Box,
    width: size[0],
    height: size[1],
  }));
const line = (n: number, from: [number, number], step: [number, number]) =>
  Array.from({ length: n }, (_, i) => [from[0] + step[0] * i, from[1] + step[1] * i] as [number, number]);

describe('derived track attributes', () => {
  it('measures a car moving right: 20 px a frame at 3 fps is 60 px/s', () => {
    const d = deriveAttributes(track(line(7, [100, 200], [20, 0])), 7);
    expect(d).toMatchObject({
      rules_version: DERIVE_RULES_VERSION,
      points: 7,
      duration_s: 2,
      motion: 'moving',
      direction: 'right',
      heading_deg: 0,
      net_displacement_px: 120,
      path_length_px: 120,
      mean_speed_px_s: 60,
      scale_px: 50,
      scale_trend: 'steady',
      truncated_frames: 0,
      gap_frames: 0,
    });
    expect(deriveAttributes(track(line(7, [300, 400], [0, -20])), 7)).toMatchObject({
      direction: 'up',
      heading_deg: -90,
    });
    expect(deriveAttributes(track(line(7, [300, 100], [-2, 20])), 7).direction).toBe('down');
  });

  it('calls a box within half a diagonal stationary, and a lone box unknown', () => {
    // Back and forth: a long path, a net displacement of 24 px (under 25).
    const d = deriveAttributes(
      track([
        [300, 200],
        [330, 200],
        [300, 200],
        [324, 200],
      ]),
      4,
    );
    expect(d).toMatchObject({ motion: 'stationary', direction: null, heading_deg: null, path_length_px: 84 });
    expect(deriveAttributes(track([[300, 200]]), 1)).toMatchObject({
      motion: 'unknown',
      mean_speed_px_s: null,
      scale_trend: 'unknown',
    });
  });

  it('tells approaching from receding by the growth of the box', () => {
    expect(
      deriveAttributes(
        track([
          [300, 200, 1],
          [300, 200, 1.1],
          [300, 200, 1.3],
        ]),
        3,
      ).scale_trend,
    ).toBe('approaching');
    expect(
      deriveAttributes(
        track([
          [300, 200, 1.3],
          [300, 200, 1],
        ]),
        2,
      ).scale_trend,
    ).toBe('receding');
  });

  it('counts boxes at the image edge as truncated, and frames of the span without a box as gaps', () => {
    // Left edge at x = 1; right edge at 640 − 1; the middle one inside.
    const d = deriveAttributes(
      track([
        [16, 200],
        [300, 200],
        [624, 200],
      ]),
      5,
    );
    expect(d).toMatchObject({ truncated_frames: 2, truncated_share: 0.667, gap_frames: 2 });
    // Without the frame's size only the left and top edges are known.
    expect(
      deriveAttributes(
        track(
          [
            [16, 200],
            [300, 200],
            [624, 200],
          ],
          [null, null],
        ),
        3,
      ).truncated_frames,
    ).toBe(1);
  });
});
