import type { AppConfig } from '../../core/config';
import { NotFoundError } from '../../core/errors';
import { summariseTrace, thresholdInForce } from '../../core/review/explain';
import { rarity, uncertainty } from '../../core/review/ranking';
import { fitPolicyDefaults, type ThresholdFitResult } from '../../core/routing/thresholds';
import { routingDefaults } from '../autolabel/threshold-fits';
import type { Db } from '../db';
import { QUEUE_CLASS_COUNTS, QUEUE_DEFAULT_STATES, QUEUE_SCORE_SQL } from './queue';

interface ExplainRow {
  id: string;
  frame_id: string;
  session_id: string;
  state: string;
  source: string;
  conf: number | null;
  version: number;
  class_id: number;
  class_name: string;
  l1: string;
  class_count: bigint;
  total: bigint;
  score: number;
  position: bigint | null;
  provenance_id: string | null;
  provenance_at: Date | null;
  paths: unknown;
  raw_confidences: unknown;
  agreement: number | null;
  entropy: number | null;
  quality_flags: unknown;
  reasoner_trace: unknown;
}

/**
 * Why an object sits where it does in the review queue: its score and factors, its position in the
 * default queue, its newest provenance and the auto-accept threshold in force for its class.
 * One statement reads the object, its score and position, so they describe the same snapshot.
 */
export async function explainObject(db: Db, config: Pick<AppConfig, 'autolabel'>, id: string) {
  const states = [...QUEUE_DEFAULT_STATES];
  const [rows, policy] = await Promise.all([
    db.$queryRaw<ExplainRow[]>`
      WITH ${QUEUE_CLASS_COUNTS},
           me AS (
             SELECT o.id::text AS id, o.frame_id::text AS frame_id, fr.session_id::text AS session_id, o.state,
                    o.source, o.conf, o.version, o.class_id, c.name AS class_name, c.l1,
                    d.n AS class_count, t.n::bigint AS total, ${QUEUE_SCORE_SQL} AS score
             FROM objects o
             JOIN frames fr ON fr.id = o.frame_id
             JOIN ontology_classes c ON c.id = o.class_id
             JOIN dist d ON d.class_id = o.class_id
             CROSS JOIN total t
             WHERE o.id = ${id}::uuid),
           -- The default queue's ordering is (score desc, id asc) with the id compared as text, as
           -- reviewQueue pages it; the objects ahead of this one are counted, never listed.
           queued AS (
             SELECT o.id::text AS id, ${QUEUE_SCORE_SQL} AS score
             FROM objects o
             JOIN dist d ON d.class_id = o.class_id
             CROSS JOIN total t
             WHERE o.state = ANY(${states}::text[]))
      SELECT me.*,
             CASE WHEN me.state = ANY(${states}::text[]) THEN
               (SELECT count(*) FROM queued q WHERE q.score > me.score OR (q.score = me.score AND q.id < me.id)) + 1
             END AS position,
             p.id::text AS provenance_id, p.created_at AS provenance_at, p.paths, p.raw_confidences,
             p.agreement, p.entropy, p.quality_flags, p.reasoner_trace
      FROM me
      LEFT JOIN LATERAL (
        SELECT * FROM provenance WHERE object_id = me.id::uuid ORDER BY created_at DESC, id DESC LIMIT 1
      ) p ON true`,
    routingDefaults(db, config),
  ]);
  const r = rows[0];
  if (!r) throw new NotFoundError(`no object ${id}`);

  // routingDefaults names the fit but not whether its global threshold replaced the configured one.
  const fit = policy.threshold_fit_id
    ? await db.thresholdFit.findUnique({ where: { id: policy.threshold_fit_id } })
    : null;
  const globalFitted = fit
    ? fitPolicyDefaults({ global: fit.global, classes: fit.classes } as unknown as Pick<
        ThresholdFitResult,
        'global' | 'classes'
      >).auto_accept_conf !== null
    : false;

  const classCount = Number(r.class_count);
  const total = Number(r.total);
  const trace = r.provenance_id ? summariseTrace(r.reasoner_trace) : null;
  return {
    object_id: r.id,
    frame_id: r.frame_id,
    session_id: r.session_id,
    state: r.state,
    source: r.source,
    conf: r.conf,
    version: r.version,
    class: { id: r.class_id, name: r.class_name, l1: r.l1 },
    queue: {
      score: r.score,
      uncertainty: uncertainty(r.conf),
      rarity: rarity(classCount, total),
      class_count: classCount,
      total_objects: total,
      states,
      in_queue: r.position !== null,
      position: r.position === null ? null : Number(r.position),
    },
    provenance: {
      id: r.provenance_id,
      created_at: r.provenance_at?.toISOString() ?? null,
      paths: Array.isArray(r.paths) ? (r.paths as unknown[]) : null,
      raw_confidences: r.provenance_id ? r.raw_confidences : null,
      agreement: r.agreement,
      entropy: r.entropy,
      quality_flags: Array.isArray(r.quality_flags) ? (r.quality_flags as unknown[]) : null,
      route: trace?.route ?? null,
      critic: trace?.critic ?? null,
      verifier: trace?.verifier ?? null,
    },
    threshold: {
      ...thresholdInForce(policy, r.class_name, r.conf, globalFitted),
      policy: {
        auto_accept_conf: policy.auto_accept_conf,
        review_low: policy.review_low,
        require_agreement: policy.require_agreement,
        threshold_fit_id: policy.threshold_fit_id ?? null,
      },
    },
  };
}
