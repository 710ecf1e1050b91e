import type { AppConfig } from '../../core/config';
import { ConflictError, NotFoundError } from '../../core/errors';
import { MACHINE_SOURCE_SPELLINGS } from '../../core/objects/sources';
import {
  fitPolicyDefaults,
  fitThresholds,
  type JudgedObject,
  type ThresholdFitResult,
} from '../../core/routing/thresholds';
import { calibratedConf, type AgentPolicy } from '../../core/routing';
import type { Prisma, ThresholdFit } from '../../generated/prisma/client';
import { recordAudit } from '../audit';
import type { Db } from '../db';
import { activeRoutingCalibration } from '../quality/calibration';

/** Review actions that judge a machine object: confirm and accept say it was right, reject that it was wrong, relabel that its class was (unless to the same class). */
const JUDGING_ACTIONS = ['confirm', 'accept', 'reject', 'relabel'];

/**
 * The human verdicts on machine objects: every judged control sample (correct or not), and each
 * machine object's first review that judged it. A control and a review of the same object count
 * once, as the control (it is the deliberate audit). Only sessions in `sessionIds` when given.
 */
export async function gatherVerdicts(
  db: Db,
  sessionIds: readonly string[] | null,
): Promise<{ judged: JudgedObject[]; evidence: { controls: number; reviews: number } }> {
  const sessions = sessionIds ? JSON.stringify(sessionIds) : null;
  const [controls, reviews] = await Promise.all([
    db.$queryRaw<Array<{ objectId: string; className: string; conf: number; correct: boolean }>>`
      SELECT c.object_id::text AS "objectId", c.class_name AS "className", c.conf, c.verdict = 'correct' AS correct
        FROM control_samples c
       WHERE c.verdict IS NOT NULL AND c.conf IS NOT NULL AND c.class_name IS NOT NULL
         AND (${sessions}::jsonb IS NULL OR c.session_id::text IN (SELECT jsonb_array_elements_text(${sessions}::jsonb)))`,
    // A machine object's first review turns it `human`, so the first review whose `before` is
    // machine-source is the one that judged what the machine proposed.
    db.$queryRaw<Array<{ objectId: string; className: string; conf: number; correct: boolean }>>`
      SELECT r.object_id::text AS "objectId", k.name AS "className", (r.before->>'conf')::float8 AS conf,
             (r.action IN ('confirm', 'accept') OR (r.action = 'relabel' AND r.after->>'class_id' = r.before->>'class_id')) AS correct
        FROM (SELECT DISTINCT ON (object_id) * FROM reviews
               WHERE before->>'source' IN (SELECT jsonb_array_elements_text(${JSON.stringify(MACHINE_SOURCE_SPELLINGS)}::jsonb))
                 AND action IN (SELECT jsonb_array_elements_text(${JSON.stringify(JUDGING_ACTIONS)}::jsonb))
                 AND before->>'conf' IS NOT NULL
               ORDER BY object_id, created_at) r
        JOIN ontology_classes k ON k.id = (r.before->>'class_id')::int
        LEFT JOIN objects o ON o.id = r.object_id
        LEFT JOIN frames f ON f.id = o.frame_id
       WHERE ${sessions}::jsonb IS NULL OR f.session_id::text IN (SELECT jsonb_array_elements_text(${sessions}::jsonb))`,
  ]);
  const controlled = new Set(controls.map((c) => c.objectId));
  const reviewed = reviews.filter((r) => !controlled.has(r.objectId));
  const judged = [...controls, ...reviewed].map(({ className, conf, correct }) => ({
    className,
    conf,
    correct,
  }));
  return { judged, evidence: { controls: controls.length, reviews: reviewed.length } };
}

/** The figures a stored fit keeps in its JSON columns, as fitThresholds made them. */
const storedFigures = (fit: ThresholdFit): Pick<ThresholdFitResult, 'global' | 'classes'> =>
  ({ global: fit.global, classes: fit.classes }) as unknown as Pick<ThresholdFitResult, 'global' | 'classes'>;

/** A fit as the fusion threshold routes show it. */
export function thresholdFitOut(fit: ThresholdFit) {
  const result = storedFigures(fit);
  return {
    fit_id: fit.id,
    target_precision: fit.targetPrecision,
    min_samples: fit.minSamples,
    session_ids: fit.sessionIds.length ? fit.sessionIds : null,
    evidence: fit.evidence,
    global: result.global,
    classes: result.classes,
    active: fit.active,
    activated_at: fit.activatedAt?.toISOString() ?? null,
    activated_by: fit.activatedBy,
    created_by: fit.createdBy,
    created_at: fit.createdAt.toISOString(),
  };
}

export async function createThresholdFit(
  db: Db,
  input: {
    targetPrecision: number;
    minSamples: number;
    sessionIds: string[] | null;
    actorId: string;
    requestId: string;
  },
): Promise<ThresholdFit> {
  const [{ judged: raw, evidence }, calibration] = await Promise.all([
    gatherVerdicts(db, input.sessionIds),
    activeRoutingCalibration(db),
  ]);
  // Routing compares calibrated confidences under an active calibration, so thresholds are fitted on them too.
  const judged = calibration
    ? raw.map((j) => ({ ...j, conf: calibratedConf(calibration, j.className, j.conf) }))
    : raw;
  const result = fitThresholds(judged, input.targetPrecision, input.minSamples);
  return db.$transaction(async (tx) => {
    const fit = await tx.thresholdFit.create({
      data: {
        targetPrecision: input.targetPrecision,
        minSamples: input.minSamples,
        sessionIds: input.sessionIds ?? [],
        evidence: {
          ...evidence,
          judged: judged.length,
          ...(calibration ? { calibration_id: calibration.calibration_id } : {}),
        },
        global: result.global as unknown as Prisma.InputJsonValue,
        classes: result.classes as unknown as Prisma.InputJsonValue,
        createdBy: input.actorId,
      },
    });
    await recordAudit(tx, {
      actorId: input.actorId,
      action: 'fusion.thresholds.fitted',
      subjectType: 'threshold_fit',
      subjectId: fit.id,
      detail: {
        target_precision: input.targetPrecision,
        judged: judged.length,
        global: result.global.status,
      },
      requestId: input.requestId,
    });
    return fit;
  });
}

/** Serialises activations: the one-active rule holds under concurrent calls. */
const ACTIVATION_LOCK = 727_200;

/**
 * Makes one fit the active one (and no other), in one transaction; audited. A fit with nothing
 * fitted — no global threshold and no class threshold or never-class — would change nothing, so it
 * is refused rather than shown as active.
 */
export async function activateThresholdFit(
  db: Db,
  id: string,
  actor: { actorId: string; requestId: string },
): Promise<ThresholdFit> {
  return db.$transaction(async (tx) => {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(${ACTIVATION_LOCK}::int)`;
    const fit = await tx.thresholdFit.findUnique({ where: { id } });
    if (!fit) throw new NotFoundError(`no threshold fit ${id}`);
    const defaults = fitPolicyDefaults(storedFigures(fit));
    if (defaults.auto_accept_conf === null && Object.keys(defaults.class_thresholds).length === 0) {
      throw new ConflictError(
        `threshold fit ${id} fitted nothing (too few verdicts); activating it would change no threshold`,
      );
    }
    const previous = await tx.thresholdFit.findFirst({ where: { active: true }, select: { id: true } });
    await tx.thresholdFit.updateMany({ where: { active: true, id: { not: id } }, data: { active: false } });
    const activated = await tx.thresholdFit.update({
      where: { id },
      data: { active: true, activatedAt: new Date(), activatedBy: actor.actorId },
    });
    await recordAudit(tx, {
      actorId: actor.actorId,
      action: 'fusion.thresholds.activated',
      subjectType: 'threshold_fit',
      subjectId: id,
      detail: { previous: previous?.id ?? null },
      requestId: actor.requestId,
    });
    return activated;
  });
}

/**
 * The routing defaults new auto-label jobs (and the uncertainty view) start from: the deployment's
 * configured policy, with the active threshold fit's global threshold as auto_accept_conf when it
 * fitted one and its class thresholds. review_low never exceeds the default threshold. With an
 * active confidence calibration (docs/quality-measure.md) the policy carries its maps, and routing
 * compares calibrated confidences with these thresholds.
 */
export async function routingDefaults(db: Db, config: Pick<AppConfig, 'autolabel'>): Promise<AgentPolicy> {
  const a = config.autolabel;
  const base: AgentPolicy = {
    auto_accept_conf: a.autoAcceptConf,
    require_agreement: a.requireAgreement,
    review_low: a.reviewLow,
  };
  const [fit, calibration] = await Promise.all([
    db.thresholdFit.findFirst({ where: { active: true } }),
    activeRoutingCalibration(db),
  ]);
  if (calibration) base.calibration = calibration;
  if (!fit) return base;
  const fitted = fitPolicyDefaults(storedFigures(fit));
  const autoAccept = fitted.auto_accept_conf ?? base.auto_accept_conf;
  return {
    ...base,
    auto_accept_conf: autoAccept,
    review_low: Math.min(base.review_low, autoAccept),
    class_thresholds: fitted.class_thresholds,
    threshold_fit_id: fit.id,
  };
}
