import { linkLanes } from './link';
import type { Point } from './polyline';

const line = (xTop: number, xBottom: number, top = 100, bottom = 240): Point[] => [
  [xTop, top],
  [xBottom, bottom],
];
let seq = 0;
const newId = () => `g${++seq}`;
beforeEach(() => {
  seq = 0;
});

describe('linkLanes', () => {
  it('links each lane to the nearest one of the next frame, one to one, into groups', () => {
    const { groups, pairs, chains } = linkLanes(
      [
        {
          frameId: 'f0',
          width: 320,
          lanes: [
            { id: 'a0', points: line(150, 40), groupId: null },
            { id: 'b0', points: line(165, 170), groupId: null },
          ],
        },
        // Listed in the other order, moved 3 px; c1 is far from both.
        {
          frameId: 'f1',
          width: 320,
          lanes: [
            { id: 'b1', points: line(168, 173), groupId: null },
            { id: 'a1', points: line(153, 43), groupId: null },
            { id: 'c1', points: line(200, 300), groupId: null },
          ],
        },
        { frameId: 'f2', width: 320, lanes: [] },
        // A frame without lanes between does not break the chain.
        { frameId: 'f3', width: 320, lanes: [{ id: 'a3', points: line(155, 45), groupId: null }] },
      ],
      newId,
    );
    expect(groups.get('a0')).toBe(groups.get('a1'));
    expect(groups.get('a1')).toBe(groups.get('a3'));
    expect(groups.get('b0')).toBe(groups.get('b1'));
    expect(new Set([groups.get('a0'), groups.get('b0'), groups.get('c1')]).size).toBe(3);
    expect([pairs, chains]).toEqual([3, 3]);
  });

  it('keeps a group id a lane already had, and a lane further than the limit starts its own', () => {
    const frames = [
      { frameId: 'f0', width: 320, lanes: [{ id: 'a0', points: line(150, 40), groupId: 'kept' }] },
      { frameId: 'f1', width: 320, lanes: [{ id: 'a1', points: line(150, 40 + 20), groupId: 'kept' }] },
    ];
    // Mean distance 10 px against a limit of 0.03 × 320 = 9.6 px.
    const apart = linkLanes(frames, newId);
    expect([apart.groups.get('a0'), apart.groups.get('a1'), apart.pairs]).toEqual(['kept', 'g1', 0]);
    const near = linkLanes(frames, newId, undefined, 12);
    expect([near.groups.get('a0'), near.groups.get('a1'), near.pairs]).toEqual(['kept', 'kept', 1]);
  });

  it('never links lanes that share too few rows, however close', () => {
    const { pairs } = linkLanes(
      [
        { frameId: 'f0', width: 320, lanes: [{ id: 'a0', points: line(150, 150, 100, 150), groupId: null }] },
        { frameId: 'f1', width: 320, lanes: [{ id: 'a1', points: line(150, 150, 160, 240), groupId: null }] },
      ],
      newId,
    );
    expect(pairs).toBe(0);
  });
});
