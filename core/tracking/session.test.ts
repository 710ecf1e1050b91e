import type { Box } from '../geometry/boxes';
import { DEFAULT_TRACKER_SETTINGS } from './bytetrack';
import { trackSession, type SessionFrame } from './session';

const box = (x: number, y = 100): Box => [x, y, x + 40, y + 80];

/** Six frames: a car moving right, a pedestrian moving left at the same place, frames given out of order. */
const frames: SessionFrame[] = Array.from({ length: 6 }, (_, i) => ({
  frameId: `f${i}`,
  index: i,
  tsMs: i * 333,
  objects: [
    { objectId: `car${i}`, className: 'car', box: box(10 + 8 * i), score: 0.9 },
    { objectId: `ped${i}`, className: 'pedestrian', box: box(60 - 8 * i), score: 1 },
  ],
})).reverse();

describe('trackSession', () => {
  it('links each class apart, in frame order, naming the objects and frames of each point', () => {
    const tracks = trackSession(frames, DEFAULT_TRACKER_SETTINGS);
    expect(tracks.map((t) => t.className)).toEqual(['car', 'pedestrian']);
    expect(tracks[0]!.trajectory.map((p) => p.object_id)).toEqual([
      'car0',
      'car1',
      'car2',
      'car3',
      'car4',
      'car5',
    ]);
    expect(tracks[1]!.trajectory.map((p) => p.object_id)).toEqual([
      'ped0',
      'ped1',
      'ped2',
      'ped3',
      'ped4',
      'ped5',
    ]);
    expect(tracks[0]!.trajectory[2]).toEqual({
      frame_id: 'f2',
      frame_index: 2,
      ts_ms: 666,
      object_id: 'car2',
      box: box(26),
      score: 0.9,
    });
  });

  it('gives no track to a session without objects, and is the same run after run', () => {
    expect(
      trackSession([{ frameId: 'a', index: 0, tsMs: 0, objects: [] }], DEFAULT_TRACKER_SETTINGS),
    ).toEqual([]);
    expect(trackSession(frames, DEFAULT_TRACKER_SETTINGS)).toEqual(
      trackSession(frames, DEFAULT_TRACKER_SETTINGS),
    );
  });
});
