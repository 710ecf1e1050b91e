import { z } from 'zod';
import { CONTROL_RATE, CONTROL_VERDICTS, MIN_CONTROL_SAMPLE, precisionReport } from '../../../core/control';
import { CRITIC_CHECKS } from '../../../core/critic';
import { ConflictError, NotFoundError } from '../../../core/errors';
import { recordAudit } from '../../../activities/audit';
import { objectOut } from '../../../activities/annotations/objects';
import { controlSeedWorkflow } from '../../../workflows/control-seed';
import type { AppDeps } from '../../deps';
import { RouteGroup, uuidParams } from '../../http/route-group';
import { startWorkflow } from '../../http/start-workflow';

/** Bodies and queries of the control routes (the spec shows none; docs/autolabel.md). */
export const ControlSeedIn = z.strictObject({
  seed: z
    .number()
    .int()
    .min(0)
    .max(2 ** 31 - 1)
    .nullable()
    .default(null)
    .meta({ description: 'null: the deployment seed (APP_AUTOLABEL__CONTROL_SEED)' }),
  session_id: z
    .uuid()
    .nullable()
    .default(null)
    .meta({ description: 'only this session’s auto-accepts; null: all' }),
});
export const ControlVerdictIn = z.strictObject({
  verdict: z.enum(CONTROL_VERDICTS),
  note: z.string().max(2000).nullable().default(null),
});
const PendingQuery = z.strictObject({
  session_id: z.uuid().optional(),
  limit: z.coerce.number().int().min(1).max(500).default(50),
});
const PrecisionQuery = z.strictObject({ session_id: z.uuid().optional() });

/** The control-sample part of the `govern` group. */
export function createGovernControlRoutes(deps: AppDeps): RouteGroup {
  const { db, config } = deps;
  return new RouteGroup('govern')
    .get(
      '/api/govern/control/pending',
      {
        summary: 'Controls awaiting a human verdict, oldest first, each with its auto-accepted object',
        access: 'reviewer',
        query: PendingQuery,
      },
      async ({ query }) => {
        const where = { verdict: null, ...(query.session_id ? { sessionId: query.session_id } : {}) };
        const [total, samples] = await Promise.all([
          db.controlSample.count({ where }),
          db.controlSample.findMany({
            where,
            orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
            take: query.limit,
          }),
        ]);
        const objects = new Map(
          (
            await db.annoObject.findMany({
              where: { id: { in: samples.map((s) => s.objectId) } },
              include: { class: { select: { name: true } } },
            })
          ).map((o) => [o.id, o]),
        );
        return {
          total,
          items: samples.map((s) => {
            const o = objects.get(s.objectId);
            return {
              sample_id: s.id,
              object_id: s.objectId,
              session_id: s.sessionId,
              seed: s.seed,
              class_name: s.className,
              conf: s.conf,
              checks: s.checks,
              created_at: s.createdAt.toISOString(),
              object: o ? objectOut(o) : null,
            };
          }),
        };
      },
    )
    .post(
      '/api/govern/control/seed',
      {
        summary: `Mirror ${CONTROL_RATE * 100}% of the auto-accepted objects to review by a seeded draw (Temporal workflow controlSeedWorkflow, id control-seed-<seed>): the same seed picks the same objects, and nothing twice; 202 with a Location listing the controls awaiting review, progress and outcome on /api/events/jobs`,
        access: 'reviewer',
        body: { name: 'ControlSeedIn', schema: ControlSeedIn },
        successStatus: 202,
        statuses: { 409: 'a seeding with this seed is already running' },
      },
      async ({ body, principal, req, res }) => {
        const seed = body.seed ?? config.autolabel.controlSeed;
        const started = await startWorkflow(deps, res, {
          workflow: controlSeedWorkflow,
          workflowId: `control-seed-${seed}`,
          args: [{ seed, sessionId: body.session_id, actorId: principal.userId, requestId: String(req.id) }],
          location: `/api/govern/control/pending${body.session_id ? `?session_id=${body.session_id}` : ''}`,
          what: `a control seeding with seed ${seed}`,
        });
        return {
          ...started,
          seed,
          session_id: body.session_id,
          rate: CONTROL_RATE,
          events_url: '/api/events/jobs',
        };
      },
    )
    .post(
      '/api/govern/control/{sample_id}/verdict',
      {
        summary: 'A human verdict on a control; a wrong auto-accept goes back to review',
        access: 'reviewer',
        params: uuidParams('sample_id'),
        body: { name: 'ControlVerdictIn', schema: ControlVerdictIn },
        statuses: { 404: 'no such control', 409: 'the control already has a verdict' },
      },
      async ({ params, body, principal, req }) => {
        const id = params.sample_id;
        return db.$transaction(async (tx) => {
          const sample = await tx.controlSample.findUnique({ where: { id } });
          if (!sample) throw new NotFoundError(`no control sample ${id}`);
          const { count } = await tx.controlSample.updateMany({
            where: { id, verdict: null },
            data: {
              verdict: body.verdict,
              note: body.note,
              reviewerId: principal.userId,
              verdictAt: new Date(),
            },
          });
          if (count === 0)
            throw new ConflictError(`control sample ${id} already has the verdict ${sample.verdict}`);
          // A wrong auto-accept must not stay accepted: it goes to review like a critic veto would send it.
          const demoted =
            body.verdict === 'correct'
              ? 0
              : (
                  await tx.annoObject.updateMany({
                    where: { id: sample.objectId, state: 'auto_accept' },
                    data: { state: 'review', version: { increment: 1 } },
                  })
                ).count;
          await recordAudit(tx, {
            actorId: principal.userId,
            action: 'control.verdict',
            subjectType: 'control_sample',
            subjectId: id,
            detail: { object_id: sample.objectId, verdict: body.verdict, object_demoted: demoted === 1 },
            requestId: String(req.id),
          });
          const after = await tx.controlSample.findUniqueOrThrow({ where: { id } });
          return {
            sample_id: id,
            object_id: after.objectId,
            verdict: after.verdict,
            note: after.note,
            reviewer_id: after.reviewerId,
            verdict_at: after.verdictAt!.toISOString(),
            object_demoted_to_review: demoted === 1,
          };
        });
      },
    )
    .get(
      '/api/govern/control/precision',
      {
        summary: `Measured auto-accept precision from the control sample: Laplace-smoothed, from ${MIN_CONTROL_SAMPLE} reviewed controls per check; "not yet measurable" before`,
        access: 'annotator',
        query: PrecisionQuery,
      },
      async ({ query }) => {
        const samples = await db.controlSample.findMany({
          where: query.session_id ? { sessionId: query.session_id } : {},
          select: { verdict: true, checks: true },
        });
        const report = precisionReport(samples, CRITIC_CHECKS);
        return {
          control_rate: CONTROL_RATE,
          min_sample: MIN_CONTROL_SAMPLE,
          smoothing: 'laplace',
          session_id: query.session_id ?? null,
          ...report,
        };
      },
    );
}
