import type { Box } from '../geometry/boxes';
import {
  INTENTS,
  INTENT_INFO,
  INTENT_THRESHOLDS,
  proposeIntent,
  wrapDegrees,
  type IntentPoint,
} from './intent';

/** A 30×40 box (diagonal 50 px) centred on each given point, one frame apart at 3 fps. */
const track = (centres: Array<[number, number]>): IntentPoint[] =>
  centres.map(([x, y], i) => ({
    frame_index: i,
    ts_ms: (i * 1000) / 3,
    box: [x - 15, y - 20, x + 15, y + 20] as Box,
  }));
const line = (n: number, from: [number, number], step: [number, number]) =>
  Array.from({ length: n }, (_, i) => [from[0] + step[0] * i, from[1] + step[1] * i] as [number, number]);

describe('intent proposal from motion', () => {
  it('answers unknown below the minimum of points', () => {
    const p = proposeIntent(
      track([
        [100, 100],
        [200, 100],
      ]),
    );
    expect(p.intent).toBe('unknown');
    expect(p.evidence.points).toBe(2);
    expect(proposeIntent([]).intent).toBe('unknown');
  });

  it('calls a box that stays within half a diagonal stationary, and one just beyond it not', () => {
    // 8 steps of 3 px: 24 px net, under 25 px (0.5 × 50).
    const still = proposeIntent(track(line(9, [300, 200], [3, 0])));
    expect(still.intent).toBe('stationary');
    expect(still.evidence).toMatchObject({ scale_px: 50, net_displacement: 0.48, duration_s: 2.667 });
    // 26 px: it moves, but not far enough sideways to cross.
    expect(proposeIntent(track(line(9, [300, 200], [3.25, 0]))).intent).toBe('straight');
  });

  it('tells turns by the sign of the heading change on screen (y down)', () => {
    // Moving up the image, then to the right: clockwise on screen.
    const right = proposeIntent(track([...line(5, [300, 400], [0, -20]), ...line(4, [320, 320], [20, 0])]));
    expect(right.intent).toBe('turning_right');
    expect(right.evidence.turn_deg).toBeGreaterThan(INTENT_THRESHOLDS.turn_min_deg);
    expect(right.evidence.heading_in_deg).toBe(-90);
    const left = proposeIntent(track([...line(5, [300, 400], [0, -20]), ...line(4, [280, 320], [-20, 0])]));
    expect(left.intent).toBe('turning_left');
    expect(left.evidence.turn_deg).toBeLessThan(-INTENT_THRESHOLDS.turn_min_deg);
  });

  it('does not call a turn below the threshold', () => {
    // Headings −90° then −90° + 25°: a bend, not a turn.
    const bend = Math.tan((25 * Math.PI) / 180) * 20;
    const p = proposeIntent(
      track([...line(4, [300, 400], [0, -20]), ...line(4, [300 + bend, 320], [bend, -20])]),
    );
    expect(Math.abs(p.evidence.turn_deg!)).toBeLessThan(30);
    expect(p.intent).toBe('straight');
  });

  it('calls far sideways motion crossing and motion along the view straight', () => {
    const across = proposeIntent(track(line(7, [100, 300], [-15, 1]).map(([x, y]) => [x + 200, y])));
    expect(across.intent).toBe('crossing');
    expect(across.evidence.horizontal_share).toBeGreaterThan(0.8);
    const along = proposeIntent(track(line(7, [300, 300], [2, 12])));
    expect(along.intent).toBe('straight');
    // Sideways but short of 1.5 diagonals: straight.
    expect(proposeIntent(track(line(4, [300, 300], [20, 0]))).intent).toBe('straight');
  });

  it('reads the points in frame order whatever order they come in', () => {
    const pts = track([...line(5, [300, 400], [0, -20]), ...line(4, [320, 320], [20, 0])]);
    expect(proposeIntent([...pts].reverse())).toEqual(proposeIntent(pts));
  });

  it('wraps heading differences and describes the whole vocabulary', () => {
    expect(wrapDegrees(190)).toBe(-170);
    expect(wrapDegrees(-180)).toBe(180);
    expect(wrapDegrees(-350)).toBe(10);
    expect(Object.keys(INTENT_INFO).sort()).toEqual([...INTENTS].sort());
  });
});
