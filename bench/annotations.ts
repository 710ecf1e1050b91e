import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { createFrame, removeTestBlobs } from '../testkit/annotations';
import { createUserWithToken, startTestApi } from '../testkit/api';
import { createTestDatabase } from '../testkit/database';
import { testConfig } from '../testkit/stack';

/**
 * A frame with 1,000 objects through the real API, PostgreSQL and MinIO: create them one by one,
 * list them, bulk-review them in one request; each beside raw SQL doing the same rows in the same
 * run. Targets (issue 3): list p95 < 50 ms, bulk review of 1,000 < 1 s. Figures only.
 */
const N = 1000;
const LIST_RUNS = 40;
const BULK_RUNS = 5;

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const fmt = (ms: number) => `${ms.toFixed(2)} ms`;

async function timed(times: number[], fn: () => Promise<unknown>): Promise<void> {
  const t0 = performance.now();
  await fn();
  times.push(performance.now() - t0);
}

function report(name: string, api: number[], raw: number[], rowsPerCall: number): void {
  const rate = (xs: number[]) => (rowsPerCall * xs.length) / (xs.reduce((a, b) => a + b, 0) / 1000);
  console.log(
    `${name.padEnd(22)} api p50 ${fmt(pct(api, 50)).padStart(10)} p95 ${fmt(pct(api, 95)).padStart(10)} ${rate(api).toFixed(0).padStart(8)} rows/s | ` +
      `raw SQL p50 ${fmt(pct(raw, 50)).padStart(10)} p95 ${fmt(pct(raw, 95)).padStart(10)} ${rate(raw).toFixed(0).padStart(8)} rows/s | ratio p50 ${(pct(api, 50) / pct(raw, 50)).toFixed(1)}x`,
  );
}

export async function run(): Promise<void> {
  const db = await createTestDatabase();
  const api = await startTestApi(testConfig({ DATABASE_URL: db.url, APP_RATE_LIMIT__API_MAX: '1000000' }));
  const sql = new pg.Client({ connectionString: db.url });
  await sql.connect();
  try {
    const { token } = await createUserWithToken(api.deps, 'reviewer');
    const { frame, sessionId } = await createFrame(api.deps, { width: 1920, height: 1080 });
    const { frame: rawFrame } = await createFrame(api.deps, { width: 1920, height: 1080, sessionId });
    const car = (await api.deps.db.ontologyClass.findUniqueOrThrow({ where: { name: 'car' } })).id;
    const box = (i: number) => [(i * 7) % 1800, (i * 3) % 1000, ((i * 7) % 1800) + 60, ((i * 3) % 1000) + 40];

    // create: one POST per object vs one INSERT per row
    const createApi: number[] = [];
    const createRaw: number[] = [];
    const ids: string[] = [];
    for (let i = 0; i < N; i++) {
      await timed(createApi, async () => {
        const res = await api.call('POST', `/api/frames/${frame.id}/objects`, {
          token,
          body: { class_name: 'car', bbox: box(i), attrs: { i } },
        });
        if (res.status !== 201) throw new Error(`create answered ${res.status}: ${JSON.stringify(res.body)}`);
        ids.push(res.body.id);
      });
      await timed(createRaw, () =>
        sql.query(
          `INSERT INTO objects (id, frame_id, bbox, class_id, attrs, source, state, updated_at) VALUES (gen_random_uuid(), $1, $2, $3, $4, 'human', 'accepted', now())`,
          [rawFrame.id, box(i), car, { i }],
        ),
      );
    }
    report('create (1 per call)', createApi, createRaw, 1);

    // list: the frame's 1,000 objects
    const listApi: number[] = [];
    const listRaw: number[] = [];
    for (let r = 0; r < LIST_RUNS; r++) {
      await timed(listApi, async () => {
        const res = await api.call('GET', `/api/frames/${frame.id}/objects`, { token });
        if (res.body.count !== N) throw new Error(`listed ${res.body.count}`);
      });
      await timed(listRaw, () =>
        sql.query(
          `SELECT o.*, c.name FROM objects o JOIN ontology_classes c ON c.id = o.class_id WHERE frame_id = $1 ORDER BY o.created_at, o.id`,
          [rawFrame.id],
        ),
      );
    }
    report(`list (${N} objects)`, listApi, listRaw, N);

    // bulk review: 1,000 objects in one request vs one UPDATE of the same rows
    const bulkApi: number[] = [];
    const bulkRaw: number[] = [];
    const rawIds = (
      await sql.query<{ id: string }>(`SELECT id FROM objects WHERE frame_id = $1`, [rawFrame.id])
    ).rows.map((r) => r.id);
    for (let r = 0; r < BULK_RUNS; r++) {
      await timed(bulkApi, async () => {
        const res = await api.call('POST', '/api/objects/bulk-review', {
          token,
          body: { object_ids: ids, action: r % 2 ? 'reject' : 'confirm' },
        });
        if (res.status !== 200)
          throw new Error(`bulk-review answered ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`);
      });
      await timed(bulkRaw, () =>
        sql.query(
          `UPDATE objects SET state = $2, source = 'human', version = version + 1 WHERE id = ANY($1::uuid[])`,
          [rawIds, r % 2 ? 'rejected' : 'accepted'],
        ),
      );
    }
    report(`bulk-review (${N} ids)`, bulkApi, bulkRaw, N);
    console.log(
      `targets: list p95 ${fmt(pct(listApi, 95))} (goal < 50 ms), bulk review p95 ${fmt(pct(bulkApi, 95))} (goal < 1000 ms)`,
    );
  } finally {
    await removeTestBlobs(api.deps);
    await sql.end();
    await api.close();
    await db.drop();
  }
}
