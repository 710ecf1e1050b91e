/**
 * Erasure of a session (docs/erasure.md): every place its data could live, what the generic purge
 * does to each, and the proof that each is empty. Pure: the activities run the SQL built here and
 * list the bucket prefixes named here.
 */

/** Business id of the erasure workflow of a session: a second erase of it while one runs is refused. */
export const eraseWorkflowId = (sessionId: string): string => `erase-session-${sessionId}`;

/** Why a session is erased (erasures.reason). */
export const ERASURE_REASONS = ['request', 'retention'] as const;
export type ErasureReason = (typeof ERASURE_REASONS)[number];

/**
 * Tables the proof does not search, each with why it may name the session. None holds the session's
 * data (images, labels, PII regions): they hold its id, and for dataset commits the names of the
 * files it had in the commit, whose contents are deleted with the session.
 */
export const PROOF_EXEMPT_TABLES: Readonly<Record<string, string>> = {
  audit_log: 'the append-only audit log records who did what to the session, and that it was erased',
  erasures: 'the erasure record itself: the session id, its name, counts and this proof',
  dataset_commits:
    'signed, content-addressed manifests: a commit keeps its signed file list and names the session in session_ids and erased_session_ids; its stored files are deleted',
  _prisma_migrations: 'migration bookkeeping of the database schema',
};

/** What a nil UUID replaces in a record that stays: readers that expect a UUID there still parse it. */
export const ERASED_ID = '00000000-0000-0000-0000-000000000000';

/** A column as information_schema.columns reports it. */
export interface CatalogColumn {
  table: string;
  column: string;
  /** data_type, e.g. `uuid`, `text`, `jsonb`, `ARRAY`, `character varying`. */
  dataType: string;
  /** udt_name, e.g. `_uuid`, `_text` for arrays. */
  udtName: string;
}

/** How a column can hold an id: as the value, as an array element, or inside text. */
export type IdHolding = 'uuid' | 'uuid_array' | 'text';

const TEXTUAL = new Set(['text', 'character varying', 'character', 'json', 'jsonb']);
const TEXTUAL_ARRAYS = new Set(['_text', '_varchar', '_bpchar', '_json', '_jsonb']);

/** How a column of this type can hold an id, or null when it cannot (numbers, dates, booleans, bytes). */
export function idHolding(col: Pick<CatalogColumn, 'dataType' | 'udtName'>): IdHolding | null {
  if (col.dataType === 'uuid') return 'uuid';
  if (col.dataType === 'ARRAY' && col.udtName === '_uuid') return 'uuid_array';
  if (TEXTUAL.has(col.dataType)) return 'text';
  if (col.dataType === 'ARRAY' && TEXTUAL_ARRAYS.has(col.udtName)) return 'text';
  return null;
}

export interface TablePlace {
  kind: 'table';
  place: string;
  table: string;
  column: string;
  holding: IdHolding;
  /** The column's SQL type, for writing a scrubbed value back (`jsonb`, `text[]`, ...). */
  sqlType: string;
}

export interface BucketPlace {
  kind: 'bucket';
  place: string;
  bucket: string;
  prefix: string;
}

export type ErasurePlace = TablePlace | BucketPlace;

/** Every column of every table, except the exempt ones, that can hold an id: the table places, in a stable order. */
export function tablePlaces(columns: readonly CatalogColumn[]): TablePlace[] {
  return columns
    .filter((c) => !(c.table in PROOF_EXEMPT_TABLES))
    .flatMap((c): TablePlace[] => {
      const holding = idHolding(c);
      return holding
        ? [
            {
              kind: 'table',
              place: `table:${c.table}.${c.column}`,
              table: c.table,
              column: c.column,
              holding,
              sqlType: c.dataType === 'ARRAY' ? `${c.udtName.slice(1)}[]` : c.udtName,
            },
          ]
        : [];
    })
    .sort((a, b) => (a.place < b.place ? -1 : a.place > b.place ? 1 : 0));
}

/**
 * What an erasure collects before it deletes anything, so that a resumed or retried erasure (the
 * rows that named them being gone) still knows what to delete and what to prove empty.
 */
export interface ErasureSubjects {
  sessionId: string;
  frameIds: string[];
  /** Live objects, objects a corpus run replaced (kept for its revert), reviewed and mirrored ones. */
  objectIds: string[];
  trackIds: string[];
  uploadIds: string[];
  /** Stored objects named by the session's rows (frame images, redacted copies, masks, upload). */
  keys: Array<{ bucket: string; key: string }>;
  /** Stored folders: the commits' files, the lake tables published from them. */
  prefixes: Array<{ bucket: string; prefix: string }>;
  /** Dataset commits that contained the session. */
  commitIds: string[];
}

/** Every id the proof searches for, lower-case, without repeats. */
export function subjectIds(s: ErasureSubjects): string[] {
  return [
    ...new Set(
      [s.sessionId, ...s.frameIds, ...s.objectIds, ...s.trackIds, ...s.uploadIds].map((id) =>
        id.toLowerCase(),
      ),
    ),
  ];
}

const folderOf = (key: string): string => key.slice(0, key.lastIndexOf('/') + 1);

/**
 * The bucket places: the session's folder in the frames and redacted buckets, the folder of every
 * stored key it named (a frame image, a mask's versions, an upload), and the collected prefixes.
 */
export function bucketPlaces(
  s: ErasureSubjects,
  buckets: { frames: string; redacted: string; masks: string },
): BucketPlace[] {
  const places = new Map<string, BucketPlace>();
  const add = (bucket: string, prefix: string) => {
    // A key at a bucket's root has no folder of its own: the key itself is the place.
    const place = `bucket:${bucket}/${prefix}`;
    if (prefix && !places.has(place)) places.set(place, { kind: 'bucket', place, bucket, prefix });
  };
  add(buckets.frames, `${s.sessionId}/`);
  add(buckets.redacted, `${s.sessionId}/`);
  for (const id of s.objectIds) add(buckets.masks, `objects/${id}/`);
  for (const k of s.keys) add(k.bucket, folderOf(k.key) || k.key);
  for (const p of s.prefixes) add(p.bucket, p.prefix);
  return [...places.values()].sort((a, b) => (a.place < b.place ? -1 : a.place > b.place ? 1 : 0));
}

/** A stored object's location from a row's URI: `s3://bucket/key`, or a bare key in the default bucket. */
export function storedKey(uri: string, defaultBucket: string): { bucket: string; key: string } {
  const m = /^s3:\/\/([^/]+)\/(.+)$/.exec(uri);
  return m ? { bucket: m[1]!, key: m[2]! } : { bucket: defaultBucket, key: uri };
}

const UUID_RE = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const ident = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/**
 * The condition that a row of the place still holds one of the ids ($1, a text[] of lower-case
 * ids). Textual columns are searched for every UUID they contain, joined to the ids by hash, so the
 * cost grows with the column's size, not with the number of ids times rows.
 */
function holdsCondition(p: TablePlace): string {
  const col = `r.${ident(p.column)}`;
  switch (p.holding) {
    case 'uuid':
      return `${col} IN (SELECT unnest($1::uuid[]))`;
    case 'uuid_array':
      return `${col} && $1::uuid[]`;
    case 'text':
      return `EXISTS (SELECT 1 FROM regexp_matches(${col}::text, '${UUID_RE}', 'gi') AS m(v) JOIN unnest($1::text[]) AS i(id) ON i.id = lower(m.v[1]))`;
  }
}

/** Counts the rows of a place that still hold an id ($1: the ids). */
export function countSql(p: TablePlace): string {
  return `SELECT count(*)::int AS n FROM ${ident(p.table)} AS r WHERE ${holdsCondition(p)}`;
}

/**
 * What the generic purge does to a place ($1: the ids). A row whose UUID column is an erased id is
 * about the session's data and is deleted; an array loses the ids; a text or JSON value that
 * mentions one is rewritten by the activity (`scrubText`), so the rows of `selectSql` are returned.
 */
export function purgeSql(p: TablePlace): { mode: 'delete' | 'update' | 'select'; sql: string } {
  const from = `${ident(p.table)} AS r`;
  switch (p.holding) {
    case 'uuid':
      return { mode: 'delete', sql: `DELETE FROM ${from} WHERE ${holdsCondition(p)}` };
    case 'uuid_array':
      return {
        mode: 'update',
        sql: `UPDATE ${from} SET ${ident(p.column)} = ARRAY(SELECT x FROM unnest(r.${ident(p.column)}) AS x WHERE x <> ALL($1::uuid[])) WHERE ${holdsCondition(p)}`,
      };
    case 'text':
      return {
        mode: 'select',
        sql: `SELECT r.ctid::text AS row_ref, r.${ident(p.column)}::text AS value FROM ${from} WHERE ${holdsCondition(p)}`,
      };
  }
}

/** Writes a scrubbed value back to the row the select named ($1: ctid, $2: the value as text). */
export function scrubUpdateSql(p: TablePlace): string {
  return `UPDATE ${ident(p.table)} SET ${ident(p.column)} = $2::${p.sqlType} WHERE ctid = $1::tid`;
}

/** Replaces every erased id in a text or JSON value by the nil UUID (JSON stays valid: the ids sit inside strings). */
export function scrubText(value: string, ids: ReadonlySet<string>): string {
  return value.replace(new RegExp(UUID_RE, 'gi'), (m) => (ids.has(m.toLowerCase()) ? ERASED_ID : m));
}

export interface PlaceCount {
  place: string;
  kind: 'table' | 'bucket';
  remaining: number;
}

export interface ErasureProof {
  /** True when every place was searched and found empty. */
  complete: boolean;
  checked_at: string;
  /** How many ids were searched for, by kind. */
  searched: { sessions: 1; frames: number; objects: number; tracks: number; uploads: number };
  places: PlaceCount[];
  /** The places still holding something (empty when complete). */
  not_empty: string[];
  exempt: Readonly<Record<string, string>>;
}

/** The proof from the counts of every place: complete only when there are places and each is empty. */
export function evaluateProof(s: ErasureSubjects, counts: readonly PlaceCount[], at: Date): ErasureProof {
  const notEmpty = counts.filter((c) => c.remaining !== 0).map((c) => c.place);
  return {
    complete: counts.length > 0 && notEmpty.length === 0,
    checked_at: at.toISOString(),
    searched: {
      sessions: 1,
      frames: s.frameIds.length,
      objects: s.objectIds.length,
      tracks: s.trackIds.length,
      uploads: s.uploadIds.length,
    },
    places: [...counts],
    not_empty: notEmpty,
    exempt: PROOF_EXEMPT_TABLES,
  };
}
