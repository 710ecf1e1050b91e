import { attributeTimeline, type TimelineFrame } from './timeline';

const frame = (
  i: number,
  attrs: Record<string, unknown>,
  extra: Partial<TimelineFrame> = {},
): TimelineFrame => ({
  frame_id: `f${i}`,
  frame_index: i,
  ts_ms: i * 333,
  object_id: `o${i}`,
  class_name: 'car',
  state: 'accepted',
  attrs,
  ...extra,
});

describe('attribute timeline', () => {
  it('orders the frames and splits each attribute where its value changes', () => {
    const t = attributeTimeline([
      frame(4, { occluded: true, lights: { brake: true, turn: 'left' } }),
      frame(0, { occluded: false, lights: { turn: 'left', brake: true } }),
      frame(1, { occluded: false, lights: { brake: true, turn: 'left' } }, { state: 'review' }),
      frame(2, { occluded: true }),
      frame(6, { occluded: true }, { class_name: 'van' }),
    ]);
    expect(t.frames.map((f) => f.frame_index)).toEqual([0, 1, 2, 4, 6]);
    expect(t.attribute_spans.occluded).toEqual([
      {
        value: false,
        start_frame_id: 'f0',
        end_frame_id: 'f1',
        start_frame_index: 0,
        end_frame_index: 1,
        frames: 2,
      },
      // Frames 3 and 5 are not on the track: the span runs over them.
      {
        value: true,
        start_frame_id: 'f2',
        end_frame_id: 'f6',
        start_frame_index: 2,
        end_frame_index: 6,
        frames: 3,
      },
    ]);
    // Key order is not a change; a frame without the key holds null.
    expect(t.attribute_spans.lights!.map((s) => [s.value, s.start_frame_index, s.end_frame_index])).toEqual([
      [{ turn: 'left', brake: true }, 0, 1],
      [null, 2, 2],
      [{ brake: true, turn: 'left' }, 4, 4],
      [null, 6, 6],
    ]);
    expect(t.changes).toEqual({ lights: 3, occluded: 1 });
    expect(t.class_spans.map((s) => [s.value, s.frames])).toEqual([
      ['car', 4],
      ['van', 1],
    ]);
    expect(t.state_spans.map((s) => [s.value, s.start_frame_index, s.end_frame_index])).toEqual([
      ['accepted', 0, 0],
      ['review', 1, 1],
      ['accepted', 2, 6],
    ]);
  });

  it('is empty for a track without objects', () => {
    expect(attributeTimeline([])).toEqual({
      frames: [],
      class_spans: [],
      state_spans: [],
      attribute_spans: {},
      changes: {},
    });
  });
});
