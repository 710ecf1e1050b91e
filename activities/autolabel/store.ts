import { randomUUID } from 'node:crypto';
import { isControlSample } from '../../core/control';
import { MACHINE_SOURCE_SPELLINGS } from '../../core/objects/sources';
import type { AutolabelJob } from '../../generated/prisma/client';
import { withNewMasks, type MaskStore } from '../annotations/masks';
import type { Db } from '../db';
import type { FrameLabels } from './pipeline';

/** The idem key of an auto-label object: one per (job, frame, fused detection). */
export const objectIdemKey = (jobId: string, frameId: string, n: number): string =>
  `al:${jobId}:${frameId}:${n}`;

/** Running counts of a job, kept in autolabel_jobs.tally. */
export interface JobTally {
  states: Record<string, number>;
  vetoes: Record<string, number>;
  demoted: number;
  controls: number;
  verifier_asked: number;
  dropped: Record<string, number>;
  /** Frames on which each path ran, was refused or failed. */
  paths: Record<string, Record<string, number>>;
  /** Why each refused or failed path did not run (first reason seen). */
  path_reasons: Record<string, string>;
  /** The models that answered for each path that ran (an endpoint names its own model). */
  models: Record<string, string[]>;
  /** Time spent per step (ms): reading frames from MinIO, decoding, model inference alone, the rest of the paths with fusion and critic, writing. */
  ms: { read: number; decode: number; inference: number; fusion: number; write: number };
}

export const emptyTally = (): JobTally => ({
  states: {},
  vetoes: {},
  demoted: 0,
  controls: 0,
  verifier_asked: 0,
  dropped: {},
  paths: {},
  path_reasons: {},
  models: {},
  ms: { read: 0, decode: 0, inference: 0, fusion: 0, write: 0 },
});

const bump = (m: Record<string, number>, k: string, by = 1) => void (m[k] = (m[k] ?? 0) + by);

export function addToTally(t: JobTally, labels: FrameLabels, controls: number): void {
  for (const o of labels.objects) {
    bump(t.states, o.state);
    for (const v of o.critic.vetoes) bump(t.vetoes, v.check);
    if (o.demoted) t.demoted++;
  }
  t.controls += controls;
  t.verifier_asked += labels.verifier.asked;
  for (const [k, v] of Object.entries(labels.dropped)) bump(t.dropped, k, v);
  const record = (path: string, status: string, reason?: string) => {
    bump((t.paths[path] ??= {}), status);
    if (reason && !t.path_reasons[path]) t.path_reasons[path] = reason;
  };
  const answered = (path: string, model: string | undefined) => {
    const seen = (t.models[path] ??= []);
    if (model && !seen.includes(model)) seen.push(model);
  };
  for (const r of labels.runs) {
    record(r.path, r.status, r.status === 'ran' ? undefined : r.reason);
    if (r.status === 'ran') answered(r.path, r.model);
  }
  if (labels.verifier.status !== 'not_needed')
    record('verifier', labels.verifier.status, labels.verifier.reason);
  if (labels.verifier.status === 'ran') answered('verifier', labels.verifier.model);
}

/**
 * The job's `paths` (`models` in its API shape): the model of every path that ran, the closed-set
 * model by its file and hash, an endpoint's by the name it answered with.
 */
export function modelsThatRan(t: JobTally, closedSetModel: string): Record<string, string> {
  const models: Record<string, string> = { closed_set: closedSetModel };
  for (const [path, names] of Object.entries(t.models))
    if (path !== 'closed_set' && names.length) models[path] = names.join(', ');
  return models;
}

/** One labelled frame waiting to be committed. */
export interface LabelledFrame {
  frame: { id: string; index: number };
  labels: FrameLabels;
}

/** What a committed batch leaves: the job's progress as the transaction wrote it, and counts. */
export interface CommittedBatch {
  framesDone: number;
  lastFrameIndex: number;
  created: number;
  deleted: number;
  controls: number;
}

/**
 * Commits a batch of consecutive labelled frames in one transaction: each frame's machine-source
 * objects replaced by its new labels, with their provenance, the control samples drawn among the
 * auto-accepts, one audit entry per frame, the slot's heartbeat and the job's progress, which
 * ends at the batch's last frame — so a frame is either all old or all new, and a retry resumes
 * exactly after the last committed batch. Human and imported objects are never touched. Masks are
 * written first and removed again if the transaction fails; the replaced objects' masks go after
 * the commit. Run twice over the same frames (a retry after a crash), it leaves exactly one set.
 *
 * This is the GPU slot's hot path, so it is two set-based SQL statements fed one JSON document
 * each (jsonb_to_recordset), not Prisma's createMany: Prisma compiled every batch's statements
 * afresh, about 10 ms of CPU per statement against 1 ms here, on the cores the model needs
 * (docs/autolabel.md, Benchmark). The audit rows are the ones recordAudit writes.
 */
export async function commitFrames(
  db: Db,
  masks: MaskStore,
  job: Pick<AutolabelJob, 'id' | 'sessionId' | 'agentRunId'>,
  batch: readonly LabelledFrame[],
  progress: { controlSeed: number; tally: JobTally; slot: { device: number } },
): Promise<CommittedBatch> {
  const last = batch.at(-1);
  if (!last) throw new Error('commitFrames needs at least one frame');
  const frames = batch.map(({ frame, labels }) => {
    const rows = labels.objects.map((o) => ({
      o,
      id: randomUUID(),
      idemKey: objectIdemKey(job.id, frame.id, o.n),
    }));
    const controls = rows.filter(
      (r) => r.o.state === 'auto_accept' && isControlSample(progress.controlSeed, r.idemKey),
    );
    addToTally(progress.tally, labels, controls.length);
    return { frame, labels, rows, controls };
  });
  const rows = frames.flatMap((f) => f.rows.map((r) => ({ ...r, frameId: f.frame.id, labels: f.labels })));
  const controls = frames.flatMap((f) => f.controls);
  const docs = rows
    .filter((r) => r.o.fused.mask)
    .map((r) => ({ object_id: r.id, version: 1, polygons: r.o.fused.mask! }));
  const frameIds = JSON.stringify(frames.map((f) => f.frame.id));
  const machineSources = JSON.stringify(MACHINE_SOURCE_SPELLINGS);
  const createdPerFrame = JSON.stringify(
    frames.map((f) => ({ frame_id: f.frame.id, created: f.rows.map((r) => r.id) })),
  );
  const { done, old } = await withNewMasks(masks, docs, async (uris) => {
    const writes = JSON.stringify({
      objects: rows.map(({ o, id, idemKey, frameId }) => ({
        id,
        frame_id: frameId,
        bbox: o.fused.box,
        class_id: o.classId,
        conf: o.fused.conf,
        mask_uri: uris.get(id) ?? null,
        state: o.state,
        idem_key: idemKey,
      })),
      provenance: rows.map(({ o, id, labels }) => ({
        id: randomUUID(),
        object_id: id,
        // The segmentation path counts as a proposer only when it found the object's pixels.
        paths:
          o.segmentation?.status === 'ran' && o.segmentation.polygons.length
            ? [...o.fused.paths, 'segmentation']
            : o.fused.paths,
        raw_confidences: o.fused.rawConfidences,
        agreement: o.fused.agreement,
        entropy: o.fused.entropy,
        quality_flags: o.qualityFlags,
        reasoner_trace: reasonerTrace(o, labels),
      })),
      controls: controls.map(({ o, id }) => ({
        id: randomUUID(),
        object_id: id,
        class_name: o.fused.className,
        conf: o.fused.conf,
        checks: o.critic.ran,
      })),
      audits: frames.map((f) => ({
        frame_id: f.frame.id,
        created: f.rows.length,
        controls: f.controls.length,
      })),
      tally: progress.tally,
    });
    return db.$transaction(async (tx) => {
      // The frames' machine-source objects go, with their controls still awaiting a verdict (judged
      // ones stay as history) and, by cascade, their provenance. In a corpus run (AgentRun) the rows
      // are first kept whole in agent_run_frames, with the ids that replace them, for its revert;
      // a frame labelled twice by the same job (a retry) keeps what the first pass replaced.
      const old = await tx.$queryRaw<
        Array<{ id: string; frameId: string; maskUri: string | null; jobId: string | null }>
      >`
        WITH old AS (
          SELECT id, frame_id, mask_uri, job_id FROM objects
          WHERE frame_id IN (SELECT value::uuid FROM jsonb_array_elements_text(${frameIds}::jsonb))
            AND source IN (SELECT value FROM jsonb_array_elements_text(${machineSources}::jsonb))
        ),
        undo AS (
          INSERT INTO agent_run_frames (run_id, frame_id, job_id, created, replaced)
          SELECT ${job.agentRunId}::uuid, f.frame_id::uuid, ${job.id}::uuid,
                 ARRAY(SELECT jsonb_array_elements_text(f.created)::uuid),
                 COALESCE((
                   SELECT jsonb_agg(jsonb_build_object(
                     'object', to_jsonb(o),
                     'provenance', COALESCE((SELECT jsonb_agg(to_jsonb(p)) FROM provenance p WHERE p.object_id = o.id), '[]'),
                     'controls', COALESCE((SELECT jsonb_agg(to_jsonb(c)) FROM control_samples c WHERE c.object_id = o.id AND c.verdict IS NULL), '[]')
                   ) ORDER BY o.id)
                   FROM objects o JOIN old ON old.id = o.id
                   WHERE old.frame_id = f.frame_id::uuid AND old.job_id IS DISTINCT FROM ${job.id}::text), '[]')
          FROM jsonb_to_recordset(${createdPerFrame}::jsonb) AS f(frame_id text, created jsonb)
          WHERE ${job.agentRunId}::uuid IS NOT NULL
          ON CONFLICT (run_id, frame_id) DO UPDATE SET created = EXCLUDED.created
        ),
        pending_controls AS (DELETE FROM control_samples c USING old WHERE c.object_id = old.id AND c.verdict IS NULL),
        replaced AS (DELETE FROM objects o USING old WHERE o.id = old.id)
        SELECT id::text AS "id", frame_id::text AS "frameId", mask_uri AS "maskUri", job_id AS "jobId" FROM old`;
      const replacedPerFrame = JSON.stringify(
        Object.fromEntries(
          frames.map((f) => [f.frame.id, old.filter((o) => o.frameId === f.frame.id).length]),
        ),
      );
      const [done] = await tx.$queryRaw<Array<{ framesDone: number; lastFrameIndex: number }>>`
        WITH batch AS (SELECT ${writes}::jsonb AS j, ${replacedPerFrame}::jsonb AS replaced),
        new_objects AS (
          INSERT INTO objects (id, frame_id, bbox, class_id, conf, attrs, mask_uri, source, state, idem_key, job_id, updated_at)
          SELECT x.id, x.frame_id,
                 (SELECT array_agg(v::float8 ORDER BY i) FROM jsonb_array_elements_text(x.bbox) WITH ORDINALITY AS e(v, i)),
                 x.class_id, x.conf, '{}'::jsonb, x.mask_uri, 'fused', x.state, x.idem_key, ${job.id}::text, now()
          FROM batch, jsonb_to_recordset(batch.j->'objects')
            AS x(id uuid, frame_id uuid, bbox jsonb, class_id int, conf float8, mask_uri text, state text, idem_key text)
        ),
        new_provenance AS (
          INSERT INTO provenance (id, object_id, paths, raw_confidences, agreement, entropy, quality_flags, reasoner_trace)
          SELECT x.id, x.object_id, x.paths, x.raw_confidences, x.agreement, x.entropy, x.quality_flags, x.reasoner_trace
          FROM batch, jsonb_to_recordset(batch.j->'provenance')
            AS x(id uuid, object_id uuid, paths jsonb, raw_confidences jsonb, agreement float8, entropy float8, quality_flags jsonb, reasoner_trace jsonb)
        ),
        new_controls AS (
          INSERT INTO control_samples (id, object_id, session_id, seed, class_name, conf, checks, job_id)
          SELECT x.id, x.object_id, ${job.sessionId}::uuid, ${progress.controlSeed}::int, x.class_name, x.conf,
                 ARRAY(SELECT jsonb_array_elements_text(x.checks)), ${job.id}::uuid
          FROM batch, jsonb_to_recordset(batch.j->'controls') AS x(id uuid, object_id uuid, class_name text, conf float8, checks jsonb)
          ON CONFLICT (object_id) DO NOTHING
        ),
        audits AS (
          INSERT INTO audit_log (actor_id, action, subject_type, subject_id, detail)
          SELECT NULL, 'autolabel.frame', 'frame', x.frame_id,
                 jsonb_build_object('job_id', ${job.id}::text, 'created', x.created, 'replaced', COALESCE((batch.replaced->>x.frame_id)::int, 0), 'controls', x.controls)
          FROM batch, jsonb_to_recordset(batch.j->'audits') AS x(frame_id text, created int, controls int)
        ),
        heartbeat AS (UPDATE gpu_slot SET heartbeat_at = now() WHERE device = ${progress.slot.device}::int AND holder_id = ${job.id}::text)
        UPDATE autolabel_jobs SET
          frames_done = frames_done + ${frames.length}::int,
          last_frame_index = ${last.frame.index}::int,
          objects_created = objects_created + ${rows.length}::int,
          objects_deleted = objects_deleted + ${old.length}::int,
          tally = (SELECT j->'tally' FROM batch),
          updated_at = now()
        WHERE id = ${job.id}::uuid
        RETURNING frames_done AS "framesDone", last_frame_index AS "lastFrameIndex"`;
      if (!done) throw new Error(`autolabel job ${job.id} no longer exists`);
      return { done, old };
    });
  });
  // A corpus run keeps the masks of what it replaced for its revert, except its own from an earlier pass.
  const unneeded = job.agentRunId ? old.filter((o) => o.jobId === job.id) : old;
  await masks.remove(unneeded.map((o) => o.maskUri));
  return { ...done, created: rows.length, deleted: old.length, controls: controls.length };
}

/** The provenance's reasoner trace: the paths that ran, every path's status, the route, the critic, the verifier. */
function reasonerTrace(o: FrameLabels['objects'][number], labels: FrameLabels) {
  return {
    paths_ran: o.fused.pathsRan,
    paths: Object.fromEntries(
      labels.runs.map((r) => [
        r.path,
        r.status === 'ran'
          ? { status: 'ran', model: r.model ?? null }
          : { status: r.status, reason: r.reason },
      ]),
    ),
    class_distribution: o.fused.classDistribution,
    ...(labels.slicing ? { slicing: labels.slicing } : {}),
    ...(o.segmentation ? { segmentation: o.segmentation } : {}),
    route: {
      state: o.state,
      reason: o.routeReason,
      demoted_by_critic: o.demoted,
      // The conf routing compared: calibrated under the policy's calibration (the object keeps the raw one).
      ...(o.calibrated === null
        ? {}
        : {
            raw_conf: o.fused.conf,
            calibrated_conf: o.calibrated.conf,
            calibration_id: o.calibrated.calibration_id,
          }),
    },
    critic: { vetoes: o.critic.vetoes, ran: o.critic.ran, skipped: o.critic.skipped },
    verifier:
      o.fused.verifier ??
      (o.qualityFlags.includes('unverified')
        ? {
            status: labels.verifier.status,
            reason: labels.verifier.reason ?? 'the verifier gave no answer for it',
          }
        : null),
  };
}
