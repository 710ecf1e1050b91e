import { execFile } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import pg from 'pg';
import fs from 'node:fs';
import os from 'node:os';
import { startIngestStack } from '../testkit/media/harness';
import { spawnWorkerProcess } from '../testkit/worker-process';

/**
 * Issue 13's export targets on this machine: 1,000,000 objects on 100,000 frames exported as COCO
 * in under 60 s and as Parquet in under 20 s, with the process's memory bounded (RSS under 512 MB
 * whatever the size). Beside each, the floor: `COPY (SELECT …) TO STDOUT` of the same rows, in the
 * same run, and the ratio. The cpu worker runs as its own process, as deployed, and its peak RSS
 * (VmHWM) is the memory figure. Figures only; nothing asserts them. `BENCH_EXPORT_FRAMES` scales it down.
 */
const FRAMES = Number(process.env.BENCH_EXPORT_FRAMES ?? 100_000);
const PER_FRAME = 10;

const run$ = promisify(execFile);
const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

export async function run(): Promise<void> {
  const startLoad = os.loadavg()[0]!;
  const stack = await startIngestStack({ worker: false, env: { APP_RATE_LIMIT__API_MAX: '1000000' } });
  const sql = new pg.Client({ connectionString: stack.db.url });
  await sql.connect();
  const worker = spawnWorkerProcess('workers-cpu/main.ts', {
    DATABASE_URL: stack.db.url,
    APP_DATABASE__URL: stack.db.url,
    APP_TEMPORAL__ADDRESS: stack.env.address,
    APP_LOG__LEVEL: 'error',
    // As ./platform starts the cpu worker.
    NODE_OPTIONS: `--max-old-space-size=${process.env.DRIVELAB_CPU_WORKER_HEAP_MB ?? 384}`,
    ...(process.env.BENCH_EXPORT_PAGE ? { APP_EXPORT__PAGE_FRAMES: process.env.BENCH_EXPORT_PAGE } : {}),
  });
  /** Peak and current resident memory of the worker process, from /proc. */
  const memory = () => {
    const status = fs.readFileSync(`/proc/${worker.proc.pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0);
    return { peak: kb('VmHWM') * 1024, now: kb('VmRSS') * 1024 };
  };
  try {
    const t0 = performance.now();
    const { rows } = await sql.query<{ id: string }>(
      `INSERT INTO sessions (id, name, source_kind, state, updated_at)
       VALUES (gen_random_uuid(), 'bench drive', 'video', 'ready', now()) RETURNING id`,
    );
    const sessionId = rows[0]!.id;
    await sql.query(
      `INSERT INTO frames (id, session_id, index, timestamp_ms, width, height, uri, redacted_uri, context)
       SELECT gen_random_uuid(), $1, i, i * 333.3, 1920, 1080, 's3://frames/bench/' || i || '.jpg', 'bench/' || i || '.jpg',
              jsonb_build_object('exposure', jsonb_build_object('mean_luma', 40 + (i % 160)))
         FROM generate_series(0, $2 - 1) i`,
      [sessionId, FRAMES],
    );
    await sql.query(
      `INSERT INTO pii_audits (id, frame_id, n_faces, regions)
       SELECT gen_random_uuid(), id, 1, '[{"kind":"plate","bbox":[110,510,150,525],"score":0.9}]'::jsonb FROM frames`,
    );
    // Ten objects a frame: cars (whose plate region lies inside the first), people and lights.
    await sql.query(
      `INSERT INTO objects (id, frame_id, bbox, class_id, conf, attrs, source, state, updated_at)
       SELECT gen_random_uuid(), f.id,
              ARRAY[100 + k * 150, 500, 220 + k * 150, 560]::float8[],
              (SELECT id FROM ontology_classes WHERE name = (ARRAY['car','pedestrian','traffic_light','truck','bus'])[1 + k % 5]),
              0.5 + (k % 5) / 10.0, '{}'::jsonb, CASE WHEN k % 3 = 0 THEN 'human' ELSE 'auto_accept' END,
              CASE WHEN k % 3 = 0 THEN 'accepted' ELSE 'auto_accept' END, now()
         FROM frames f, generate_series(0, $1 - 1) k`,
      [PER_FRAME],
    );
    await sql.query('ANALYZE');
    console.log(
      `data: ${FRAMES} frames, ${FRAMES * PER_FRAME} objects inserted in ${secs(performance.now() - t0)}`,
    );

    const predicate = { states: ['accepted', 'auto_accept'] };
    // The floor: the same rows out of PostgreSQL with nothing done to them.
    const floorStart = performance.now();
    await run$(
      'psql',
      [
        stack.db.url,
        '-qAt',
        '-c',
        `COPY (SELECT o.*, f.session_id, f.index, f.width, f.height, f.redacted_uri, c.name, c.l0, c.l1
                FROM objects o JOIN frames f ON f.id = o.frame_id JOIN ontology_classes c ON c.id = o.class_id
               WHERE o.state IN ('accepted','auto_accept') ORDER BY o.frame_id, o.id) TO STDOUT`,
      ],
      { maxBuffer: 2 * 1024 * 1024 * 1024 },
    );
    const floor = performance.now() - floorStart;

    const baseRss = memory().now;
    const results: Array<{ format: string; ms: number; gateMs: number; target: number; peak: number }> = [];
    for (const [format, target] of [
      ['parquet', 20_000],
      ['coco', 60_000],
    ] as const) {
      const started = performance.now();
      const res = await stack.api.call('POST', '/api/export', {
        token: stack.reviewer,
        body: { name: `bench-${format}`, formats: [format], include_images: false, predicate },
      });
      if (res.status !== 202)
        throw new Error(`export answered ${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`);
      const gateMs = performance.now() - started;
      await stack.env.client.workflow.getHandle(res.body.workflow_id).result();
      results.push({ format, ms: performance.now() - started, gateMs, target, peak: memory().peak });
    }
    const peakRss = memory().peak;
    for (const r of results)
      console.log(
        `${r.format.padEnd(8)} ${secs(r.ms).padStart(8)} (goal < ${secs(r.target)}; of which the request with the privacy gate ${secs(r.gateMs)}) | COPY floor ${secs(floor)} | ratio ${(r.ms / floor).toFixed(1)}x | worker peak RSS so far ${(r.peak / 1024 / 1024).toFixed(0)} MB`,
      );
    const mb = (b: number) => `${(b / 1024 / 1024).toFixed(0)} MB`;
    console.log(
      `peak RSS of the cpu worker process: ${mb(peakRss)} (goal < 512 MB); before the exports ${mb(baseRss)}, so the export added ${mb(peakRss - baseRss)}`,
    );
    // The machine is shared: its load says how far these figures stand from an idle one's.
    console.log(
      `machine load (1-minute average) at the start ${startLoad.toFixed(1)}, at the end ${os.loadavg()[0]!.toFixed(1)}, on ${os.cpus().length} cores`,
    );
    console.log('anchors: Label Studio ~5 min for 300 images; CVAT export times out at 4 h for 55k shapes');
  } finally {
    worker.proc.kill('SIGTERM');
    await worker.exited;
    await sql.end();
    await stack.close();
  }
}
