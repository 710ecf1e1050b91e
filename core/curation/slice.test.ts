import {
  LIGHTING_SQL,
  SlicePredicate,
  rarityBand,
  sliceFrom,
  sliceSql,
  unmatchablePredicates,
} from './slice';

describe('slice predicates', () => {
  it('select everything when empty, with no parameters and no rarity join', () => {
    const sql = sliceSql({});
    expect(sql).toEqual({ where: 'TRUE', params: [], needsClassShare: false });
    expect(sliceFrom(sql)).not.toMatch(/ cs /);
  });

  it('compile every part to one condition whose values travel as parameters numbered after the caller’s', () => {
    const sql = sliceSql(
      {
        states: ['accepted'],
        classes: ['person'],
        l1: ['vru'],
        sources: ['human'],
        session_ids: ['0b7f5a1e-7d7c-4c5e-9a55-1f2b3c4d5e6f'],
        min_conf: 0.5,
        context: { weather: ['rain', 3], lighting: 'dark' },
        rarity_bands: ['rare', 'uncommon'],
      },
      3,
    );
    expect(sql.params).toEqual([
      ['accepted'],
      ['person'],
      ['vru'],
      ['human'],
      ['0b7f5a1e-7d7c-4c5e-9a55-1f2b3c4d5e6f'],
      0.5,
      ['rain', '3'],
      ['dark'],
    ]);
    expect(sql.where).toContain('o.state = ANY($3::text[])');
    // A class selects its descendants through the ontology's parent relation.
    expect(sql.where).toMatch(
      /WITH RECURSIVE d AS \(SELECT id FROM ontology_classes WHERE name = ANY\(\$4::text\[\]\)/,
    );
    expect(sql.where).toContain('c.l1 = ANY($5::text[])');
    expect(sql.where).toContain('o.source = ANY($6::text[])');
    expect(sql.where).toContain('f.session_id = ANY($7::uuid[])');
    expect(sql.where).toContain('o.conf >= $8::float8');
    expect(sql.where).toContain(`f.context->>'weather' = ANY($9::text[])`);
    expect(sql.where).toContain(`(${LIGHTING_SQL}) = ANY($10::text[])`);
    expect(sql.where).toContain('(cs.share < 0.01 OR (cs.share >= 0.01 AND cs.share < 0.1))');
    expect(sql.needsClassShare).toBe(true);
    expect(sliceFrom(sql)).toMatch(/JOIN \(SELECT class_id, .*\) cs ON cs\.class_id = o\.class_id$/);
    expect(sql.where.match(/\$\d+/g)!.length).toBe(sql.params.length);
  });

  it('match nothing for a region or track_event=true, say why, and let track_event=false match all', () => {
    expect(sliceSql({ region: { bbox: [0, 0, 1, 1] } }).where).toBe('FALSE');
    expect(sliceSql({ track_event: true }).where).toBe('FALSE');
    expect(sliceSql({ track_event: false }).where).toBe('TRUE');
    expect(
      unmatchablePredicates({ region: { bbox: [0, 0, 1, 1] }, track_event: true }).map((u) => u.predicate),
    ).toEqual(['region', 'track_event']);
    expect(unmatchablePredicates({ track_event: false, states: ['accepted'] })).toEqual([]);
  });

  it('refuse unknown fields, out-of-range values and context keys that are not snake_case', () => {
    expect(SlicePredicate.safeParse({ colour: ['red'] }).success).toBe(false);
    expect(SlicePredicate.safeParse({ states: ['maybe'] }).success).toBe(false);
    expect(SlicePredicate.safeParse({ min_conf: 1.5 }).success).toBe(false);
    expect(SlicePredicate.safeParse({ classes: [] }).success).toBe(false);
    expect(SlicePredicate.safeParse({ context: { "x'; DROP TABLE objects; --": 'a' } }).success).toBe(false);
    expect(SlicePredicate.safeParse({ region: { bbox: [0, 0, 200, 1] } }).success).toBe(false);
  });

  it('band a class by its share of the corpus: rare under 1 %, common from 10 %', () => {
    expect([0, 0.0099, 0.01, 0.0999, 0.1, 1].map(rarityBand)).toEqual([
      'rare',
      'rare',
      'uncommon',
      'uncommon',
      'common',
      'common',
    ]);
  });
});
