import { attrAudit, canonicalJson } from './attr-audit';

const o = (id: string, attrs: unknown, track: string | null = null, frame = 0, cls = 'car') => ({
  id,
  class_name: cls,
  track_id: track,
  frame_index: frame,
  attrs,
});

describe('attribute audit', () => {
  it('reports completeness, distribution, track conflicts and deviants from a dominant value', () => {
    const objects = [
      o('a1', { occluded: false, color: 'red' }, 't1', 0),
      o('a2', { occluded: false, color: 'red' }, 't1', 1),
      o('a3', { occluded: true, color: 'blue' }, 't1', 2),
      o('a4', { occluded: false }),
      o('a5', { occluded: false, color: null }),
      o('a6', { occluded: false }),
      o('a7', {}),
      o('a8', 'not an object'),
      o('p1', { pose: 'walking' }, null, 0, 'person'),
    ];
    const [car, person] = attrAudit(objects);
    expect(car!.class_name).toBe('car');
    expect(car!.objects).toBe(8);
    const occ = car!.keys.occluded!;
    expect(occ).toMatchObject({
      present: 6,
      completeness: 6 / 8,
      distinct: 2,
      majority: { value: false, share: 5 / 6 },
    });
    expect(occ.values).toEqual([
      { value: false, count: 5 },
      { value: true, count: 1 },
    ]);
    expect(occ.track_conflicts).toEqual({ tracks: 1, objects: 1, object_ids: ['a3'] });
    expect(occ.class_deviants).toEqual({ objects: 1, object_ids: ['a3'] });
    const color = car!.keys.color!;
    // 3 values of which red 2/3: below the dominant share, so nothing deviates; the track conflicts.
    expect(color).toMatchObject({ present: 3, completeness: 3 / 8, class_deviants: { objects: 0 } });
    expect(color.track_conflicts.object_ids).toEqual(['a3']);
    expect(person!.keys.pose).toMatchObject({ present: 1, completeness: 1 });
  });

  it('compares values as canonical JSON and breaks a track tie by the earliest frame', () => {
    expect(canonicalJson({ b: 2, a: [1, { d: 1, c: 2 }] })).toBe('{"a":[1,{"c":2,"d":1}],"b":2}');
    const [car] = attrAudit([
      o('x1', { box: { a: 1, b: 2 } }, 't', 5),
      o('x2', { box: { b: 2, a: 1 } }, 't', 6),
      o('y1', { lane: 'left' }, 'u', 3),
      o('y2', { lane: 'right' }, 'u', 1),
    ]);
    expect(car!.keys.box!.distinct).toBe(1);
    expect(car!.keys.lane!.track_conflicts.object_ids).toEqual(['y1']);
  });
});
