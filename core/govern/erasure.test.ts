import {
  bucketPlaces,
  countSql,
  ERASED_ID,
  eraseWorkflowId,
  evaluateProof,
  idHolding,
  purgeSql,
  scrubText,
  storedKey,
  subjectIds,
  tablePlaces,
  type ErasureSubjects,
} from './erasure';

const S = '11111111-1111-4111-8111-111111111111';
const F = '22222222-2222-4222-8222-222222222222';
const O = '33333333-3333-4333-8333-333333333333';
const subjects: ErasureSubjects = {
  sessionId: S,
  frameIds: [F],
  objectIds: [O],
  trackIds: [],
  uploadIds: [],
  keys: [
    { bucket: 'frames', key: `test/${S}/00000.jpg` },
    { bucket: 'uploads', key: 'at-the-root.bin' },
  ],
  prefixes: [{ bucket: 'exports', prefix: 'commits/abc/' }],
  commitIds: ['abc'],
};

describe('erasure places', () => {
  it('searches every column that can hold an id, except the documented exempt tables', () => {
    expect(idHolding({ dataType: 'uuid', udtName: 'uuid' })).toBe('uuid');
    expect(idHolding({ dataType: 'ARRAY', udtName: '_uuid' })).toBe('uuid_array');
    expect(idHolding({ dataType: 'jsonb', udtName: 'jsonb' })).toBe('text');
    expect(idHolding({ dataType: 'ARRAY', udtName: '_text' })).toBe('text');
    expect(idHolding({ dataType: 'integer', udtName: 'int4' })).toBeNull();
    const places = tablePlaces([
      { table: 'objects', column: 'frame_id', dataType: 'uuid', udtName: 'uuid' },
      { table: 'objects', column: 'bbox', dataType: 'ARRAY', udtName: '_float8' },
      { table: 'audit_log', column: 'subject_id', dataType: 'text', udtName: 'text' },
      { table: 'agent_runs', column: 'params', dataType: 'jsonb', udtName: 'jsonb' },
      { table: 'dataset_commits', column: 'session_ids', dataType: 'ARRAY', udtName: '_uuid' },
      { table: 'annotation_sets', column: 'object_ids', dataType: 'ARRAY', udtName: '_uuid' },
    ]);
    expect(places.map((p) => [p.place, p.holding, p.sqlType])).toEqual([
      ['table:agent_runs.params', 'text', 'jsonb'],
      ['table:annotation_sets.object_ids', 'uuid_array', 'uuid[]'],
      ['table:objects.frame_id', 'uuid', 'uuid'],
    ]);
  });

  it('deletes rows by a UUID column, strips arrays, and rewrites text, quoting identifiers', () => {
    const [json, array, uuid] = tablePlaces([
      { table: 'agent_runs', column: 'params', dataType: 'jsonb', udtName: 'jsonb' },
      { table: 'sets', column: 'object_ids', dataType: 'ARRAY', udtName: '_uuid' },
      { table: 'we"ird', column: 'frame_id', dataType: 'uuid', udtName: 'uuid' },
    ]);
    expect(purgeSql(uuid!)).toEqual({
      mode: 'delete',
      sql: 'DELETE FROM "we""ird" AS r WHERE r."frame_id" IN (SELECT unnest($1::uuid[]))',
    });
    expect(purgeSql(array!).mode).toBe('update');
    expect(purgeSql(array!).sql).toContain('x <> ALL($1::uuid[])');
    expect(purgeSql(json!).mode).toBe('select');
    expect(countSql(json!)).toContain('regexp_matches(r."params"::text');
  });

  it('replaces only the erased ids in text and JSON, which stays valid', () => {
    const other = '44444444-4444-4444-8444-444444444444';
    const value = JSON.stringify({ session_ids: [S.toUpperCase(), other], note: `frame ${F}` });
    const out = scrubText(value, new Set(subjectIds(subjects)));
    expect(JSON.parse(out)).toEqual({ session_ids: [ERASED_ID, other], note: `frame ${ERASED_ID}` });
  });

  it('lists the bucket folders of the session, its masks, its keys and prefixes once each', () => {
    const places = bucketPlaces(subjects, { frames: 'frames', redacted: 'redacted', masks: 'masks' });
    expect(places.map((p) => p.place)).toEqual([
      'bucket:exports/commits/abc/',
      `bucket:frames/${S}/`,
      `bucket:frames/test/${S}/`,
      `bucket:masks/objects/${O}/`,
      `bucket:redacted/${S}/`,
      'bucket:uploads/at-the-root.bin',
    ]);
    expect(storedKey('s3://masks/objects/x/1.json', 'frames')).toEqual({
      bucket: 'masks',
      key: 'objects/x/1.json',
    });
    expect(storedKey('test/a.jpg', 'frames')).toEqual({ bucket: 'frames', key: 'test/a.jpg' });
  });

  it('proves complete only when there were places and every one is empty', () => {
    const at = new Date('2026-12-01T00:00:00Z');
    expect(evaluateProof(subjects, [], at).complete).toBe(false);
    const empty = evaluateProof(
      subjects,
      [{ place: 'table:objects.frame_id', kind: 'table', remaining: 0 }],
      at,
    );
    expect(empty).toMatchObject({
      complete: true,
      not_empty: [],
      searched: { sessions: 1, frames: 1, objects: 1 },
    });
    const left = evaluateProof(
      subjects,
      [
        { place: 'table:a.b', kind: 'table', remaining: 0 },
        { place: 'bucket:frames/x/', kind: 'bucket', remaining: 2 },
      ],
      at,
    );
    expect(left).toMatchObject({ complete: false, not_empty: ['bucket:frames/x/'] });
    expect(eraseWorkflowId(S)).toBe(`erase-session-${S}`);
  });
});
