import { correlateEvents, overlapMs, partitionDetected } from './correlate';
import { frameRange, inWindow } from './timeline';

describe('overlapMs', () => {
  it('measures shared time, counting touching spans and points inside, null when apart', () => {
    expect(overlapMs({ tStartMs: 0, tEndMs: 100 }, { tStartMs: 50, tEndMs: 200 })).toBe(50);
    expect(overlapMs({ tStartMs: 0, tEndMs: 100 }, { tStartMs: 100, tEndMs: 200 })).toBe(0);
    expect(overlapMs({ tStartMs: 70, tEndMs: null }, { tStartMs: 50, tEndMs: 200 })).toBe(0);
    expect(overlapMs({ tStartMs: 0, tEndMs: 100 }, { tStartMs: 101, tEndMs: 200 })).toBeNull();
  });
});

describe('correlateEvents', () => {
  const driving = [
    { id: 'd-brake', tStartMs: 900, tEndMs: 1700, state: 'proposed' },
    { id: 'd-short', tStartMs: 1000, tEndMs: 1100, state: 'confirmed' },
    { id: 'd-rejected', tStartMs: 3000, tEndMs: 4000, state: 'rejected' },
  ];
  it('ties an event to the driving event it overlaps most, never to a rejected one', () => {
    const r = correlateEvents(
      [
        { id: 'e1', tStartMs: 1000, tEndMs: 1600, drivingEventId: null },
        { id: 'e2', tStartMs: 3500, tEndMs: null, drivingEventId: null },
        { id: 'e3', tStartMs: 1800, tEndMs: 1850, drivingEventId: null },
      ],
      driving,
      { toleranceMs: 0, replace: false },
    );
    expect(r.tied).toEqual([{ eventId: 'e1', drivingEventId: 'd-brake', overlapMs: 600, previous: null }]);
    expect(r.unmatched).toEqual(['e2', 'e3']);
  });

  it('widens events by the tolerance, and keeps ties unless told to replace them', () => {
    const events = [
      { id: 'e3', tStartMs: 1800, tEndMs: 1850, drivingEventId: null },
      { id: 'e4', tStartMs: 1000, tEndMs: 1050, drivingEventId: 'd-short' },
    ];
    const r = correlateEvents(events, driving, { toleranceMs: 150, replace: false });
    expect(r.tied).toEqual([{ eventId: 'e3', drivingEventId: 'd-brake', overlapMs: 50, previous: null }]);
    expect(r.kept).toEqual(['e4']);
    const again = correlateEvents(events, driving, { toleranceMs: 0, replace: true });
    expect(again.tied).toEqual([
      { eventId: 'e4', drivingEventId: 'd-short', overlapMs: 50, previous: 'd-short' },
    ]);
    expect(again.unmatched).toEqual(['e3']);
  });

  it('breaks a tie in overlap by the nearer start', () => {
    const r = correlateEvents([{ id: 'e', tStartMs: 1050, tEndMs: null, drivingEventId: null }], driving, {
      toleranceMs: 0,
      replace: false,
    });
    expect(r.tied[0]?.drivingEventId).toBe('d-short');
  });
});

describe('partitionDetected', () => {
  it('finds a moment kept already by an overlapping event of the same kind only', () => {
    const kept = [
      { id: 'k1', kind: 'hard_braking', tStartMs: 1000, tEndMs: 1500 },
      { id: 'k2', kind: 'bump', tStartMs: 2000, tEndMs: null },
    ];
    const { fresh, existing } = partitionDetected(
      [
        { kind: 'hard_braking', tStartMs: 1200, tEndMs: 1700 },
        { kind: 'hard_braking', tStartMs: 2000, tEndMs: 2400 },
        { kind: 'sharp_turn', tStartMs: 1000, tEndMs: 1500 },
      ],
      kept,
    );
    expect(existing.map((e) => e.eventId)).toEqual(['k1']);
    expect(fresh.map((f) => `${f.kind}@${f.tStartMs}`)).toEqual(['hard_braking@2000', 'sharp_turn@1000']);
  });
});

describe('frameRange and inWindow', () => {
  const frames = [0, 333, 667, 1000].map((timestampMs, index) => ({ index, timestampMs }));
  it('names the frames a span shows, none for an instant between frames', () => {
    expect(frameRange(frames, { tStartMs: 300, tEndMs: 1000 })).toEqual({
      first_index: 1,
      last_index: 3,
      frames: 3,
    });
    expect(frameRange(frames, { tStartMs: 333, tEndMs: null })).toEqual({
      first_index: 1,
      last_index: 1,
      frames: 1,
    });
    expect(frameRange(frames, { tStartMs: 400, tEndMs: 600 })).toBeNull();
    expect(frameRange(frames, { tStartMs: 1001, tEndMs: null })).toBeNull();
  });
  it('keeps what meets the window', () => {
    expect(inWindow({ tStartMs: 100, tEndMs: 200 }, 150, undefined)).toBe(true);
    expect(inWindow({ tStartMs: 100, tEndMs: 200 }, 201, undefined)).toBe(false);
    expect(inWindow({ tStartMs: 100, tEndMs: null }, undefined, 99)).toBe(false);
    expect(inWindow({ tStartMs: 100, tEndMs: null }, 100, 100)).toBe(true);
  });
});
