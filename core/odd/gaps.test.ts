import { evaluateRequirement, framesShortForShare, oddGaps } from './gaps';

describe('frames short', () => {
  it('adds enough frames carrying the value for the share to hold after they are added', () => {
    // 0 of 30 at 10 %: 3 frames would be 3 of 33 (9 %); 4 of 34 is 11.8 %.
    expect(framesShortForShare(0, 30, 0.1)).toBe(4);
    expect(framesShortForShare(3, 30, 0.1)).toBe(0);
    expect(framesShortForShare(5, 10, 0.5)).toBe(0);
    expect(framesShortForShare(4, 10, 0.5)).toBe(2);
    expect(() => framesShortForShare(1, 2, 1)).toThrow();
  });

  it('takes the bound that needs the most frames', () => {
    expect(
      evaluateRequirement({ attribute: 'weather', value: 'rain', min_frames: 10, min_share: 0.1 }, 2, 30),
    ).toMatchObject({
      status: 'under',
      frames_short: 8,
      binding: 'min_frames',
      share: 2 / 30,
      share_short: expect.closeTo(0.1 - 2 / 30, 12),
    });
    expect(evaluateRequirement({ attribute: 'weather', value: 'snow', min_share: 0.5 }, 0, 10)).toMatchObject(
      {
        status: 'missing',
        frames_short: 10,
        binding: 'min_share',
      },
    );
    expect(evaluateRequirement({ attribute: 'lighting', value: 'dark', min_frames: 1 }, 1, 1)).toMatchObject({
      status: 'met',
      frames_short: 0,
      binding: null,
    });
  });

  it('lists the gaps largest shortfall first', () => {
    const counts = new Map([
      ['weather=rain', 3],
      ['lighting=dark', 10],
    ]);
    const report = oddGaps(
      [
        { attribute: 'lighting', value: 'dark', min_frames: 5 },
        { attribute: 'weather', value: 'rain', min_frames: 5 },
        { attribute: 'weather', value: 'fog', min_frames: 7 },
      ],
      counts,
      20,
    );
    expect(report.requirements).toHaveLength(3);
    expect(report.gaps.map((g) => [g.value, g.frames_short, g.status])).toEqual([
      ['fog', 7, 'missing'],
      ['rain', 2, 'under'],
    ]);
    expect(report.frames_short).toBe(9);
  });
});
