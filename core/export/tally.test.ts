import { emptyTally, tallyPage, type TalliedFrame } from './tally';

const frame = (over: Partial<TalliedFrame>): TalliedFrame => ({
  sessionId: 's1',
  split: 'train',
  lighting: 'normal',
  audited: true,
  faces: 1,
  plates: 0,
  objects: [{ class_name: 'car', l1: 'vehicle', state: 'accepted', source: 'human' }],
  ...over,
});

describe('tallyPage', () => {
  it('adds frames, objects and every breakdown, page after page, leaving the earlier tally alone', () => {
    const first = tallyPage(emptyTally(), [frame({}), frame({ lighting: 'dark', audited: false })]);
    const second = tallyPage(first, [
      frame({
        sessionId: 's2',
        split: 'val',
        plates: 2,
        objects: [
          { class_name: 'pedestrian', l1: 'vru', state: 'auto_accept', source: 'fused' },
          { class_name: 'car', l1: 'vehicle', state: 'auto_accept', source: 'fused' },
        ],
      }),
    ]);
    expect(first.frames).toBe(2);
    expect(second).toEqual({
      objects: 4,
      frames: 3,
      perClass: { car: 3, pedestrian: 1 },
      perL1: { vehicle: 3, vru: 1 },
      perState: { accepted: 2, auto_accept: 2 },
      perSource: { human: 2, fused: 2 },
      perLighting: { normal: 2, dark: 1 },
      perSplit: { train: { frames: 2, objects: 2 }, val: { frames: 1, objects: 2 } },
      sessions: { s1: { frames: 2, objects: 2 }, s2: { frames: 1, objects: 2 } },
      pii: { frames_audited: 2, faces: 2, plates: 2 },
    });
  });
});
