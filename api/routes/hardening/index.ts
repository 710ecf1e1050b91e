import { z } from 'zod';
import { gpuSlotEfficiency } from '../../../activities/hardening/efficiency';
import { systemResources } from '../../../activities/hardening/resources';
import type { AppDeps } from '../../deps';
import { RouteGroup } from '../../http/route-group';
import { actorOf } from '../../http/actor';
import {
  checkEvaluationReproducible,
  forgetCommitRebuild,
  queueCommitRebuild,
} from '../../../activities/hardening/reproducible';
import { exportWorkflowId } from '../../../activities/export';
import { exportWorkflow } from '../../../workflows/export';
import { startWorkflowFor } from '../../http/start-workflow';
import type { Actor } from '../../../activities/annotations/objects';
import type { Response } from 'express';
import { commitIdSchema } from '../../../activities/datasets/read';
import { recordAudit } from '../../../activities/audit';
import { InputError } from '../../../core/errors';
import {
  HTTP_DURATION_BUCKETS,
  HTTP_DURATION_METRIC,
  sloStatus,
  addSnapshots,
  countsOf,
} from '../../../core/hardening/slo';
import type { Slo } from '../../../generated/prisma/client';

const DAY_MS = 86_400_000;
/** The longest period one efficiency report reads. */
const MAX_DAYS = 366;

/** The efficiency request (the spec does not show its body; docs/hardening.md). */
export const EfficiencyIn = z
  .strictObject({
    from: z.iso.datetime({ offset: true }).optional().meta({ description: 'default: `days` before `to`' }),
    to: z.iso.datetime({ offset: true }).optional().meta({ description: 'default: now' }),
    days: z.number().gt(0).max(MAX_DAYS).default(7).meta({ description: 'the period when `from` is absent' }),
    min_gap_seconds: z
      .number()
      .min(0)
      .max(DAY_MS / 1000)
      .default(60),
    top_gaps: z.int().min(0).max(100).default(10),
  })
  .transform((b, ctx) => {
    const to = b.to ? new Date(b.to) : new Date();
    const from = b.from ? new Date(b.from) : new Date(to.getTime() - b.days * DAY_MS);
    if (from.getTime() >= to.getTime())
      ctx.addIssue({ code: 'custom', path: ['from'], message: 'from must be before to' });
    if (to.getTime() - from.getTime() > MAX_DAYS * DAY_MS)
      ctx.addIssue({ code: 'custom', path: ['from'], message: `at most ${MAX_DAYS} days` });
    return { from, to, minGapSeconds: b.min_gap_seconds, topGaps: b.top_gaps };
  });

/** The `hardening` group (docs/hardening.md): so far the system's resources and GPU-slot efficiency. */
/** What to check again (the spec does not show the body; docs/hardening.md "Reproducible"). */
export const ReproducibleIn = z
  .strictObject({
    evaluation_id: z
      .uuid()
      .optional()
      .meta({ description: 'an evaluation operation (POST /api/evalgov/evaluate)' }),
    commit_id: commitIdSchema.optional(),
  })
  .refine((b) => (b.evaluation_id === undefined) !== (b.commit_id === undefined), {
    message: 'give exactly one of evaluation_id and commit_id',
    path: ['evaluation_id'],
  });

/** An objective for one route group (the spec does not show the body; docs/slo.md). */
export const SloIn = z.strictObject({
  route_group: z.string().trim().min(1).max(100),
  latency_ms: z
    .number()
    .min(5)
    .max(30_000)
    .meta({ description: 'a request is good when it answers below 500 within this' }),
  latency_target: z
    .number()
    .min(0.5)
    .max(0.99999)
    .meta({ description: 'share of requests that must be good, e.g. 0.99' }),
  error_rate_target: z
    .number()
    .min(0)
    .max(0.5)
    .meta({ description: 'largest share of 5xx answers, e.g. 0.01' }),
  window_minutes: z.int().min(5).max(525_600).default(43_200),
});

const sloOut = (s: Slo) => ({
  route_group: s.routeGroup,
  latency_ms: s.latencyMs,
  latency_target: s.latencyTarget,
  error_rate_target: s.errorRateTarget,
  window_minutes: s.windowMinutes,
  updated_at: s.updatedAt.toISOString(),
});

export function createHardeningRoutes(deps: AppDeps, servedGroups: () => readonly string[]): RouteGroup {
  const { db } = deps;
  return new RouteGroup('hardening')
    .post(
      '/api/hardening/reproducible',
      {
        summary:
          "Checks that a result reproduces. An evaluation is computed again from the same run, gold set, slice, IoU threshold and parity tolerance and compared figure by figure with what was stored (200). A dataset commit's export is rebuilt (export workflow export-<job_id>, into a scratch prefix, recording no commit) from its selection, split, formats and gate mode and compared file by file with its manifest, its stored files hashed again and its certificate's signature checked (202, Location: the rebuild's export job, whose `reproduces.result` is the answer). Recorded as a governance run and audited",
        access: 'reviewer',
        body: { name: 'ReproducibleIn', schema: ReproducibleIn },
        alsoSucceeds: { 202: "a commit's rebuild started" },
        statuses: {
          404: 'no such evaluation operation or dataset commit',
          409: 'the kill switch is engaged (a rebuild is an export)',
          422: 'the run, gold set or slice it was computed from is no longer usable',
        },
      },
      async ({ body, principal, req, res }) =>
        body.evaluation_id
          ? checkEvaluationReproducible(deps, body.evaluation_id, actorOf(principal, req))
          : startCommitRebuild(deps, res, body.commit_id!, actorOf(principal, req)),
    )
    .post(
      '/api/hardening/slo',
      {
        summary:
          'Sets the latency and error-rate objective of one route group (created or replaced): a request is good when it answers below 500 within latency_ms; latency_target is the share that must be good, error_rate_target the largest share of 5xx answers',
        access: 'admin',
        body: { name: 'SloIn', schema: SloIn },
        statuses: { 422: 'not a route group this API serves' },
      },
      async ({ body, principal, req }) => {
        const served = [...new Set(servedGroups())].sort();
        if (!served.includes(body.route_group))
          throw new InputError(`${body.route_group} is not a route group this API serves`, [
            { field: 'body.route_group', message: `one of ${served.join(', ')}` },
          ]);
        const row = {
          latencyMs: body.latency_ms,
          latencyTarget: body.latency_target,
          errorRateTarget: body.error_rate_target,
          windowMinutes: body.window_minutes,
          createdBy: principal.userId,
        };
        const slo = await db.slo.upsert({
          where: { routeGroup: body.route_group },
          create: { routeGroup: body.route_group, ...row },
          update: row,
        });
        await recordAudit(db, {
          actorId: principal.userId,
          action: 'hardening.slo_set',
          subjectType: 'slo',
          subjectId: slo.id,
          detail: sloOut(slo),
          requestId: String(req.id),
        });
        return sloOut(slo);
      },
    )
    .get(
      '/api/hardening/slo/board',
      {
        summary:
          'Every objective beside what the API measured over its window — the http_request_duration_seconds histograms of every API process, flushed to the database, and this process’s counts not yet flushed: requests, latency compliance (read at the largest bucket bound not above the objective) and error rate, each with its error budget, spent and remaining, and whether it is met',
        access: 'reviewer',
      },
      async () => {
        const slos = await db.slo.findMany({ orderBy: { routeGroup: 'asc' } });
        const pending = await deps.slo.pending();
        const now = new Date();
        const objectives = [];
        for (const s of slos) {
          const windowFrom = new Date(now.getTime() - s.windowMinutes * 60_000);
          // Samples flushed inside the window, by every API process, and what this one has not flushed yet.
          const rows = await db.sloSample.findMany({
            where: { routeGroup: s.routeGroup, createdAt: { gt: windowFrom } },
            select: { requests: true, errors: true, within: true, since: true },
          });
          const counted = addSnapshots([...rows, ...[pending.groups.get(s.routeGroup)].filter((g) => !!g)]);
          const earliest = Math.min(pending.since.getTime(), ...rows.map((r) => r.since.getTime()));
          const from = Math.max(earliest, windowFrom.getTime());
          objectives.push({
            ...sloStatus(
              {
                route_group: s.routeGroup,
                latency_ms: s.latencyMs,
                latency_target: s.latencyTarget,
                error_rate_target: s.errorRateTarget,
              },
              countsOf(counted, s.latencyMs),
            ),
            window_minutes: s.windowMinutes,
            measured_from: new Date(from).toISOString(),
            // The share of the objective's window the samples cover.
            window_covered: Math.min(
              1,
              Math.round(((now.getTime() - from) / (s.windowMinutes * 60_000)) * 1e6) / 1e6,
            ),
          });
        }
        return {
          measured: {
            source: `${HTTP_DURATION_METRIC} of every API process, flushed to slo_samples every ${deps.config.slo.flushSeconds} s, with this process's counts since its last flush`,
            to: now.toISOString(),
            buckets_ms: HTTP_DURATION_BUCKETS.map((b) => b * 1000),
          },
          objectives,
        };
      },
    )
    .post(
      '/api/hardening/efficiency',
      {
        summary:
          'GPU-slot utilisation over a period from the job records (local auto-label and training jobs, inference runs on the slot): busy and idle time, busy time per kind, overlaps, and the longest idle gaps',
        access: 'reviewer',
        body: { name: 'EfficiencyIn', schema: EfficiencyIn },
      },
      async ({ body }) => gpuSlotEfficiency(deps.db, body),
    )
    .get(
      '/api/system/resources',
      {
        summary:
          "The API host's CPU (cores, load) and memory, the disks of the models, temp and ingest folders, who holds the GPU slot, the auto-label, training, export and corpus jobs queued and running, and each Temporal task queue's workers and backlog (or why Temporal gave none)",
        access: 'admin',
      },
      async () => systemResources({ db: deps.db, config: deps.config, connection: deps.temporal.connection }),
    );
}

/** Queues a commit's rebuild and its check, then starts the export workflow that does it. */
async function startCommitRebuild(deps: AppDeps, res: Response, commitId: string, actor: Actor) {
  const queued = await queueCommitRebuild(deps, commitId, actor);
  const { job, check, subject } = queued;
  const workflowId = exportWorkflowId(job.id);
  const started = await startWorkflowFor(deps, res, {
    workflow: exportWorkflow,
    workflowId,
    args: [{ jobId: job.id, heartbeatTimeoutSeconds: deps.config.export.heartbeatTimeoutSeconds }],
    location: `/api/exports/${job.id}/progress`,
    what: `the rebuild of commit ${commitId}`,
    forget: () => forgetCommitRebuild(deps.db, queued),
  });
  await deps.db.exportJob.update({ where: { id: job.id }, data: { workflowId } });
  await recordAudit(deps.db, {
    actorId: actor.userId,
    action: 'hardening.reproducible_started',
    subjectType: 'dataset_commit',
    subjectId: commitId,
    detail: { check_id: check.id, job_id: job.id },
    requestId: actor.requestId,
  });
  return {
    check_id: check.id,
    subject,
    state: 'running',
    job_id: job.id,
    created_at: check.createdAt.toISOString(),
    ...started,
  };
}
