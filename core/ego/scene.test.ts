import { DEFAULT_SCENE_THRESHOLDS, detectSceneChanges, meanLumaOf, type SceneFrame } from './scene';

const A = '0000000000000000';
const NEAR = '0000000000000007'; // 3 bits from A
const FAR = 'ffffffff00000000'; // 32 bits from A, 35 from NEAR

const frame = (i: number, phash: string | null, meanLuma: number | null): SceneFrame => ({
  id: `f${i}`,
  index: i,
  timestampMs: i * 333,
  phash,
  meanLuma,
});

describe('detectSceneChanges', () => {
  it('finds a cut by perceptual hash and a change of light by mean luma, each between its two frames', () => {
    const found = detectSceneChanges(
      [frame(0, A, 120), frame(1, NEAR, 118), frame(2, FAR, 121), frame(3, FAR, 122), frame(4, FAR, 30)],
      DEFAULT_SCENE_THRESHOLDS,
    );
    expect(found).toMatchObject({ pairs: 4, compared: 4 });
    expect(found.changes).toEqual([
      {
        kind: 'scene_change',
        t_start_ms: 333,
        t_end_ms: 666,
        causes: ['appearance'],
        max_phash_distance: 35,
        max_luma_delta: 3,
        from_frame_id: 'f1',
        to_frame_id: 'f2',
        from_index: 1,
        to_index: 2,
      },
      expect.objectContaining({ causes: ['lighting'], max_luma_delta: 92, from_index: 3, to_index: 4 }),
    ]);
  });

  it('joins changes on consecutive frame pairs into one event and orders frames by index', () => {
    const found = detectSceneChanges(
      [frame(3, null, 20), frame(0, null, 200), frame(1, null, 140), frame(2, null, 80)],
      DEFAULT_SCENE_THRESHOLDS,
    );
    expect(found.changes).toEqual([
      expect.objectContaining({
        t_start_ms: 0,
        t_end_ms: 999,
        from_index: 0,
        to_index: 3,
        max_luma_delta: 60,
      }),
    ]);
  });

  it('compares nothing when frames hold neither measure, and ignores a malformed hash', () => {
    expect(
      detectSceneChanges([frame(0, null, null), frame(1, 'xyz', null)], DEFAULT_SCENE_THRESHOLDS),
    ).toEqual({
      changes: [],
      pairs: 1,
      compared: 0,
    });
  });

  it('reads the mean luma ingest stores in the context', () => {
    expect(meanLumaOf({ exposure: { mean_luma: 97.5 } })).toBe(97.5);
    expect(meanLumaOf({ exposure: {} })).toBeNull();
    expect(meanLumaOf(null)).toBeNull();
  });
});
