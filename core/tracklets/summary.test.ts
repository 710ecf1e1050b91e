import { summariseTracklet, trackletStats, type TrackletObject } from './summary';

const object = (i: number, extra: Partial<TrackletObject> = {}): TrackletObject => ({
  frame_id: `f${i}`,
  frame_index: i,
  ts_ms: i * 500,
  object_id: `o${i}`,
  class_name: 'car',
  state: 'review',
  attrs: {},
  source: 'fused',
  conf: 0.8,
  keyframe: false,
  ...extra,
});

describe('tracklet summary', () => {
  it('summarises span, keyframes, sources in their canonical spellings, states and mean confidence', () => {
    const s = summariseTracklet([
      object(7, {
        source: 'human',
        conf: null,
        state: 'accepted',
        keyframe: true,
        attrs: { keyframe: true },
      }),
      object(2, { source: 'interp', conf: null }),
      object(3, { conf: 0.6 }),
      object(4, { source: 'propagated', conf: 0.7, attrs: { occluded: true } }),
    ]);
    expect(s).toMatchObject({
      objects: 4,
      first_frame_id: 'f2',
      last_frame_id: 'f7',
      first_frame_index: 2,
      last_frame_index: 7,
      span_frames: 6,
      duration_ms: 2500,
      classes: { car: 4 },
      keyframes: [{ object_id: 'o7', frame_id: 'f7', frame_index: 7 }],
      sources: { fused: 1, human: 1, interpolated: 1, propagated: 1 },
      states: { accepted: 1, review: 3 },
      mean_conf: 0.65,
      conf_objects: 2,
    });
    expect(s.attribute_timeline.attribute_spans.occluded!.map((x) => x.value)).toEqual([null, true, null]);
    expect(s.attribute_timeline).not.toHaveProperty('frames');
  });

  it('summarises a track without objects as empty', () => {
    expect(summariseTracklet([])).toMatchObject({
      objects: 0,
      first_frame_id: null,
      span_frames: 0,
      mean_conf: null,
    });
  });
});

describe('tracklet corpus statistics', () => {
  it('bins lengths, groups by class and tracker, and measures keyframe coverage', () => {
    const s = trackletStats([
      { class_name: 'car', tracker_version: 'bytetrack-ts-1', objects: 1, keyframes: 0 },
      { class_name: 'car', tracker_version: 'bytetrack-ts-1', objects: 5, keyframes: 2 },
      { class_name: 'person', tracker_version: 'propagate-1', objects: 12, keyframes: 0 },
      { class_name: null, tracker_version: 'bytetrack-ts-1', objects: 0, keyframes: 0 },
    ]);
    expect(s).toMatchObject({
      tracks: 4,
      objects: 18,
      length: { mean: 4.5, min: 0, p50: 3, max: 12 },
      per_class: {
        car: { tracks: 2, objects: 6, mean_length: 3 },
        person: { tracks: 1, objects: 12, mean_length: 12 },
        unknown: { tracks: 1, objects: 0, mean_length: 0 },
      },
      per_tracker_version: {
        'bytetrack-ts-1': { tracks: 3, objects: 6 },
        'propagate-1': { tracks: 1, objects: 12 },
      },
      keyframes: { total: 2, tracks_with_keyframes: 1, track_coverage: 0.25, object_share: 0.1111 },
    });
    expect(s.length_distribution.map((b) => b.tracks)).toEqual([1, 1, 0, 1, 1, 0, 0]);
    expect(trackletStats([])).toMatchObject({
      tracks: 0,
      length: { mean: null, p50: null },
      keyframes: { track_coverage: null },
    });
  });
});
