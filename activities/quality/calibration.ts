import { NotFoundError, RefusedError } from '../../core/errors';
import { MACHINE_SOURCE_SPELLINGS } from '../../core/objects/sources';
import type { RoutingCalibration } from '../../core/routing';
import {
  applyCalibration,
  type CalibrationFit,
  type CalibrationMethod,
  type CalibrationSample,
} from '../../core/quality/calibration';
import {
  MIN_CALIBRATION_SAMPLES,
  fitReport,
  reviewVerdict,
  routingCalibration,
  type CalibrationFitReport,
} from '../../core/quality/calibration-fit';
import { Prisma, type Calibration } from '../../generated/prisma/client';
import type { Actor } from '../annotations/objects';
import { recordAudit } from '../audit';
import type { Db } from '../db';
import { findGold } from './gold';
import { recordOperation } from './operations';

/**
 * Confidence calibration in the store (docs/quality-measure.md): the human verdicts on machine
 * objects of a session or a gold set become samples, core/quality/calibration fits the maps, a
 * Calibration row keeps the fit and its report, and the one active calibration feeds auto-accept
 * routing and threshold fits (routingDefaults, createThresholdFit).
 */

export interface CalibrateInput {
  gold_id?: string | null | undefined;
  session_id?: string | null | undefined;
  method?: CalibrationMethod | null | undefined;
  activate: boolean;
}

type Origin = 'review' | 'control' | 'gold_confirmed' | 'gold_rejected';
type Sample = CalibrationSample & { object_id: string; origin: Origin };

/** The first review of each object that found it machine-source (a review makes an object human). */
const firstMachineReviews = (db: Db, where: Prisma.Sql) => db.$queryRaw<
  Array<{ objectId: string; action: string; before: unknown; after: unknown; state: string | null }>
>`
  SELECT DISTINCT ON (r.object_id) r.object_id::text AS "objectId", r.action, r.before, r.after, o.state
    FROM reviews r JOIN objects o ON o.id = r.object_id JOIN frames f ON f.id = o.frame_id
   WHERE ${where}
     AND r.before->>'source' = ANY(${[...MACHINE_SOURCE_SPELLINGS]}::text[])
   ORDER BY r.object_id, r.created_at, r.id`;

/**
 * A session's samples: each machine object's first review (confirm/accept/relabel with the class
 * unchanged: right; reject or a class change: wrong; an edit judges nothing) and every judged
 * control of the session. An object with both counts once, as its control (the deliberate audit).
 */
async function sessionSamples(db: Db, sessionId: string): Promise<Sample[]> {
  const session = await db.session.findUnique({ where: { id: sessionId }, select: { id: true } });
  if (!session) throw new NotFoundError(`no session ${sessionId}`);
  const [reviews, controls] = await Promise.all([
    firstMachineReviews(db, Prisma.sql`f.session_id = ${sessionId}::uuid`),
    db.$queryRaw<Array<{ objectId: string; classId: number; conf: number; correct: boolean }>>`
      SELECT c.object_id::text AS "objectId", k.id AS "classId", c.conf, c.verdict = 'correct' AS correct
        FROM control_samples c JOIN ontology_classes k ON k.name = c.class_name
       WHERE c.session_id = ${sessionId}::uuid AND c.verdict IS NOT NULL
         AND c.conf IS NOT NULL AND c.conf >= 0 AND c.conf <= 1`,
  ]);
  const controlled = new Set(controls.map((c) => c.objectId));
  const fromReviews = reviews.flatMap((r): Sample[] => {
    if (controlled.has(r.objectId)) return [];
    const v = reviewVerdict(r);
    return v ? [{ ...v, object_id: r.objectId, origin: 'review' }] : [];
  });
  const fromControls = controls.map((c): Sample => ({
    class_id: c.classId,
    conf: c.conf,
    correct: c.correct,
    object_id: c.objectId,
    origin: 'control',
  }));
  return [...fromReviews, ...fromControls].sort((a, b) => (a.object_id < b.object_id ? -1 : 1));
}

/**
 * A gold set's samples: each confirmed item's machine proposal (right when its class is the gold
 * class), and the machine proposals on its frames that people rejected (wrong; the first review's
 * `before` has their class and conf). A rejected proposal someone deleted left no row to find.
 */
async function goldSamples(db: Db, goldId: string): Promise<Sample[]> {
  const gold = await findGold(db, goldId);
  const [items, reviews] = await Promise.all([
    db.goldItem.findMany({
      where: { goldId: gold.id, origin: 'confirmed' },
      select: { objectId: true, classId: true, proposed: true },
    }),
    firstMachineReviews(db, Prisma.sql`f.id = ANY(${gold.frameIds}::uuid[])`),
  ]);
  const inGold = new Set(gold.objectIds);
  const confirmed = items.flatMap((i): Sample[] => {
    const p = (i.proposed ?? {}) as { class_id?: unknown; conf?: unknown };
    if (typeof p.conf !== 'number' || !(p.conf >= 0 && p.conf <= 1) || typeof p.class_id !== 'number')
      return [];
    return [
      {
        class_id: p.class_id,
        conf: p.conf,
        correct: p.class_id === i.classId,
        object_id: i.objectId,
        origin: 'gold_confirmed',
      },
    ];
  });
  const rejected = reviews.flatMap((r): Sample[] => {
    if (inGold.has(r.objectId) || r.state !== 'rejected') return [];
    const v = reviewVerdict({ ...r, action: 'reject' });
    return v ? [{ ...v, correct: false, object_id: r.objectId, origin: 'gold_rejected' }] : [];
  });
  return [...confirmed, ...rejected].sort((a, b) => (a.object_id < b.object_id ? -1 : 1));
}

export const calibrationOut = (c: Calibration) => ({
  calibration_id: c.id,
  method: c.method,
  source: c.source,
  samples: c.nSamples,
  active: c.active,
  activated_at: c.activatedAt?.toISOString() ?? null,
  activated_by: c.activatedBy,
  created_by: c.createdBy,
  created_at: c.createdAt.toISOString(),
  fit: c.fit,
  report: c.report,
});

/** Serialises activations, so at most one calibration is ever active. */
const ACTIVATION_LOCK = 727_214;

/** Fits a calibration from the verdicts of a session or a gold set; 422 under MIN_CALIBRATION_SAMPLES. */
export async function fitCalibrationFromStore(db: Db, input: CalibrateInput, actor: Actor) {
  const source = input.gold_id ? { gold_id: input.gold_id } : { session_id: input.session_id! };
  const samples = input.gold_id
    ? await goldSamples(db, input.gold_id)
    : await sessionSamples(db, input.session_id!);
  const byOrigin: Record<Origin, number> = { review: 0, control: 0, gold_confirmed: 0, gold_rejected: 0 };
  for (const s of samples) byOrigin[s.origin]++;
  if (samples.length < MIN_CALIBRATION_SAMPLES)
    throw new RefusedError(
      `${samples.length} human verdict(s) on machine objects; a calibration needs at least ${MIN_CALIBRATION_SAMPLES}`,
      {
        reason: 'too_few_verdicts',
        samples: samples.length,
        minimum: MIN_CALIBRATION_SAMPLES,
        by_origin: byOrigin,
      },
    );
  const fitted = fitReport(samples, input.method ?? null);
  const names = new Map(
    (
      await db.ontologyClass.findMany({
        where: { id: { in: fitted.classes.map((c) => c.class_id) } },
        select: { id: true, name: true },
      })
    ).map((c) => [c.id, c.name]),
  );
  const report = {
    samples: fitted.samples,
    by_origin: byOrigin,
    selection: fitted.selection,
    before: fitted.before,
    after: fitted.after,
    alternative: fitted.alternative,
    classes: fitted.classes.map((c) => ({ ...c, class_name: names.get(c.class_id) ?? null })),
  };
  const calibration = await db.$transaction(async (tx) => {
    if (input.activate) {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(${ACTIVATION_LOCK}::int)`;
      await tx.calibration.updateMany({ where: { active: true }, data: { active: false } });
    }
    const row = await tx.calibration.create({
      data: {
        method: fitted.method,
        source,
        nSamples: fitted.samples,
        fit: fitted.fit as unknown as Prisma.InputJsonValue,
        report: report as unknown as Prisma.InputJsonValue,
        active: input.activate,
        activatedAt: input.activate ? new Date() : null,
        activatedBy: input.activate ? actor.userId : null,
        createdBy: actor.userId,
      },
    });
    await recordAudit(tx, {
      actorId: actor.userId,
      action: input.activate ? 'calibration.fitted_activated' : 'calibration.fitted',
      subjectType: 'calibration',
      subjectId: row.id,
      detail: { ...source, method: fitted.method, samples: fitted.samples, activated: input.activate },
      requestId: actor.requestId,
    });
    const op = await recordOperation(tx, {
      opType: 'calibration_fit',
      subjectIds: [row.id, input.gold_id ?? input.session_id!],
      params: { ...source, method: input.method ?? null, activate: input.activate },
      result: { calibration_id: row.id, method: fitted.method, ...report },
      actor,
    });
    return { row, operationId: op.id };
  });
  return { operation_id: calibration.operationId, ...calibrationOut(calibration.row) };
}

export async function activeCalibration(db: Db | Prisma.TransactionClient): Promise<Calibration | null> {
  return db.calibration.findFirst({ where: { active: true }, orderBy: { activatedAt: 'desc' } });
}

/** The active calibration in the form routing applies (class maps by name), or null. */
export async function activeRoutingCalibration(db: Db): Promise<RoutingCalibration | null> {
  const active = await activeCalibration(db);
  if (!active) return null;
  const fit = active.fit as unknown as CalibrationFit;
  const names = new Map(
    (
      await db.ontologyClass.findMany({
        where: { id: { in: fit.classes.map((c) => c.class_id) } },
        select: { id: true, name: true },
      })
    ).map((c) => [c.id, c.name]),
  );
  return routingCalibration(active.id, fit, names);
}

/** An object's calibrated confidence under a stored calibration (null without a conf). */
export function calibratedConfOf(c: Calibration, classId: number, conf: number | null): number | null {
  return conf === null ? null : applyCalibration(c.fit as unknown as CalibrationFit, classId, conf);
}

/** The per-class ECE of a stored calibration's report, by class id. */
export function calibrationClassEce(c: Calibration): Map<number, CalibrationFitReport['classes'][number]> {
  const classes = ((c.report as { classes?: CalibrationFitReport['classes'] }).classes ??
    []) as CalibrationFitReport['classes'];
  return new Map(classes.map((x) => [x.class_id, x]));
}
