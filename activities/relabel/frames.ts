import { MACHINE_SOURCE_SPELLINGS } from '../../core/objects/sources';
import type { Db } from '../db';

/** One object's new class, as a corpus relabel or an imported relabel decided it. */
export interface RelabelWrite {
  objectId: string;
  classId: number;
  className: string;
  /** The classifier's score of the new class; null for an import that gave none. */
  conf: number | null;
  /** Why the object moved, kept on its provenance (the classifier's view, or the import's). */
  trace: Record<string, unknown>;
}

export type RelabelSkip = { object_id: string; reason: 'not_found' | 'human' | 'rejected' };

const MACHINE = JSON.stringify(MACHINE_SOURCE_SPELLINGS);

/**
 * Writes one frame's relabels as part of run `runId`, in one transaction: the objects' rows are
 * first kept whole (with their provenance and pending controls) in agent_run_frames, then each
 * object takes its new class in place — the same id, track and mask — with source `relabel`,
 * state `review` (a corpus-wide correction is never accepted: a person confirms it), its version
 * counted up and a provenance row saying why; its pending control samples go (a review replaces
 * them). Only machine-made objects move: a `human` or `imported` one, or a rejected one, is
 * skipped with the reason. A frame the run already wrote is left as it is (a retried page).
 */
export async function writeRelabelFrame(
  db: Db,
  runId: string,
  frameId: string,
  writes: readonly RelabelWrite[],
): Promise<{ written: number; skipped: RelabelSkip[]; already: boolean }> {
  return db.$transaction(async (tx) => {
    const done = await tx.agentRunFrame.findUnique({ where: { runId_frameId: { runId, frameId } } });
    if (done) return { written: 0, skipped: [], already: true };
    const ids = writes.map((w) => w.objectId);
    const rows = await tx.$queryRaw<Array<{ id: string; source: string; state: string }>>`
      SELECT id::text, source, state FROM objects
       WHERE id = ANY(${ids}::uuid[]) AND frame_id = ${frameId}::uuid FOR UPDATE`;
    const found = new Map(rows.map((r) => [r.id, r]));
    const machine = JSON.parse(MACHINE) as string[];
    const skipped: RelabelSkip[] = [];
    const moving = writes.filter((w) => {
      const row = found.get(w.objectId);
      const reason = !row
        ? 'not_found'
        : !machine.includes(row.source)
          ? 'human'
          : row.state === 'rejected'
            ? 'rejected'
            : null;
      if (reason) skipped.push({ object_id: w.objectId, reason });
      return reason === null;
    });
    if (moving.length === 0) return { written: 0, skipped, already: false };
    const movingIds = moving.map((w) => w.objectId);
    await tx.$executeRaw`
      INSERT INTO agent_run_frames (run_id, frame_id, job_id, created, replaced)
      SELECT ${runId}::uuid, ${frameId}::uuid, ${runId}::uuid, ${movingIds}::uuid[],
             COALESCE(jsonb_agg(jsonb_build_object(
               'object', to_jsonb(o),
               'provenance', COALESCE((SELECT jsonb_agg(to_jsonb(p)) FROM provenance p WHERE p.object_id = o.id), '[]'),
               'controls', COALESCE((SELECT jsonb_agg(to_jsonb(c)) FROM control_samples c WHERE c.object_id = o.id AND c.verdict IS NULL), '[]')
             ) ORDER BY o.id), '[]')
        FROM objects o WHERE o.id = ANY(${movingIds}::uuid[])`;
    await tx.$executeRaw`DELETE FROM control_samples WHERE object_id = ANY(${movingIds}::uuid[]) AND verdict IS NULL`;
    const batch = JSON.stringify(
      moving.map((w) => ({
        id: w.objectId,
        class_id: w.classId,
        conf: w.conf,
        trace: { run_id: runId, ...w.trace },
      })),
    );
    await tx.$executeRaw`
      UPDATE objects o SET class_id = x.class_id, conf = COALESCE(x.conf, o.conf), source = 'relabel',
             state = 'review', version = o.version + 1, updated_at = now()
        FROM jsonb_to_recordset(${batch}::jsonb) AS x(id uuid, class_id int, conf float8, trace jsonb)
       WHERE o.id = x.id`;
    await tx.$executeRaw`
      INSERT INTO provenance (id, object_id, paths, raw_confidences, reasoner_trace)
      SELECT gen_random_uuid(), x.id, '["relabel"]'::jsonb,
             CASE WHEN x.conf IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('relabel', x.conf) END, x.trace
        FROM jsonb_to_recordset(${batch}::jsonb) AS x(id uuid, conf float8, trace jsonb)`;
    return { written: moving.length, skipped, already: false };
  });
}
