import { z } from 'zod';
import { recordAudit } from '../../../activities/audit';
import { checkSessions } from '../../../activities/curation/slice-query';
import {
  DISCOVERY_MAX_FRAMES,
  discoveryRunOut,
  embeddedFrames,
  type DiscoveryParams,
} from '../../../activities/discovery';
import { DEFAULT_EMBEDDING_MODEL, EMBEDDING_MODEL_NAMES } from '../../../core/curation/embedding';
import { InputError, NotFoundError, RefusedError } from '../../../core/errors';
import type { DiscoveryCandidate } from '../../../generated/prisma/client';
import { DISCOVERY_WORKFLOW_ID, discoveryWorkflow } from '../../../workflows/discovery';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../http/actor';
import { RouteGroup } from '../../http/route-group';
import { limitParam } from '../../http/session-reads';
import { startWorkflowFor } from '../../http/start-workflow';

export const DISCOVERY_KINDS = ['ambiguous_class', 'novel_scene'] as const;
/** A finding's states (docs/discovery.md); any may follow any, by a reviewer. */
export const DISCOVERY_STATES = ['new', 'triaged', 'novel_class', 'known', 'dismissed'] as const;

/** The body of a run (the spec shows none; docs/discovery.md). */
const DiscoveryRunIn = z.strictObject({
  session_ids: z.array(z.uuid()).min(1).max(1000).optional(),
  min_entropy: z
    .number()
    .min(0)
    .max(10)
    .default(0.5)
    .meta({ description: 'class entropy (bits) across the fusion paths from which an object is disputed' }),
  min_conf: z
    .number()
    .min(0)
    .max(1)
    .default(0.3)
    .meta({ description: 'confidence from which a disputed object is surely there' }),
  min_z: z
    .number()
    .min(0)
    .max(100)
    .default(3.5)
    .meta({ description: 'robust z of the neighbour distance from which a frame is novel' }),
  model: z.enum(EMBEDDING_MODEL_NAMES).default(DEFAULT_EMBEDDING_MODEL),
});

/** The spec's CandidateStateIn. */
const CandidateStateIn = z.strictObject({
  state: z.enum(DISCOVERY_STATES),
  tag: z.string().trim().min(1).max(64).nullable().optional(),
});

const QueueQuery = z.strictObject({
  state: z.enum(DISCOVERY_STATES).optional(),
  kind: z.enum(DISCOVERY_KINDS).optional(),
  run_id: z.uuid().optional(),
  session_id: z.uuid().optional(),
  limit: limitParam(50, 500),
  cursor: z.string().max(200).optional().meta({ description: 'next_cursor of the previous page' }),
});

/** The queue is ordered by score, best first: its cursor is the last row's score and id. */
const encodeQueueCursor = (c: Pick<DiscoveryCandidate, 'score' | 'id'>) =>
  Buffer.from(JSON.stringify([c.score, c.id])).toString('base64url');
function decodeQueueCursor(cursor: string): { score: number; id: string } {
  try {
    const [score, id] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [unknown, unknown];
    if (
      typeof score === 'number' &&
      Number.isFinite(score) &&
      typeof id === 'string' &&
      z.uuid().safeParse(id).success
    )
      return { score, id };
  } catch {
    // fall through: not a cursor this API wrote
  }
  throw new InputError('cursor is not one this API issued', [
    { field: 'query.cursor', message: 'malformed cursor' },
  ]);
}

const candidateOut = (c: DiscoveryCandidate) => ({
  candidate_id: c.id,
  kind: c.kind,
  subject_id: c.subjectId,
  frame_id: c.frameId,
  session_id: c.sessionId,
  run_id: c.runId,
  score: c.score,
  evidence: c.evidence,
  state: c.state,
  tag: c.tag,
  decided_by: c.decidedBy,
  decided_at: c.decidedAt?.toISOString() ?? null,
  created_at: c.createdAt.toISOString(),
});

/**
 * The `discovery` group (docs/discovery.md): mine the corpus for what the ontology may not know,
 * the queue of findings, and a person's verdict on each.
 */
export function createDiscoveryRoutes(deps: AppDeps): RouteGroup {
  const { db } = deps;
  return new RouteGroup('discovery')
    .post(
      '/api/discovery/run',
      {
        summary: `Mine the corpus (or the listed sessions) for what the ontology may not know (202, workflow discovery-run): machine-made objects whose detectors disagree on their class while they are surely there, and frames far from every other in embedding space (at most ${DISCOVERY_MAX_FRAMES} embedded frames); findings join the queue, a finding found again keeps its state`,
        access: 'reviewer',
        body: { name: 'DiscoveryRunIn', schema: DiscoveryRunIn },
        successStatus: 202,
        statuses: {
          404: 'a listed session does not exist',
          409: 'a discovery run is already running',
          422: 'more embedded frames in scope than one run compares',
          503: 'the workflow service does not answer',
        },
      },
      async ({ body, res, principal, req }) => {
        const actor = actorOf(principal, req);
        await checkSessions(db, body.session_ids, 'body.session_ids');
        const params: DiscoveryParams = { ...body, session_ids: body.session_ids ?? null };
        const embedded = await embeddedFrames(db, params);
        if (embedded > DISCOVERY_MAX_FRAMES)
          throw new RefusedError(
            `${embedded} embedded frames in scope: one run compares at most ${DISCOVERY_MAX_FRAMES}; narrow it with session_ids`,
            { embedded, max_frames: DISCOVERY_MAX_FRAMES },
          );
        const run = await db.discoveryRun.create({
          data: { params: params as object, workflowId: DISCOVERY_WORKFLOW_ID, createdBy: actor.userId },
        });
        const started = await startWorkflowFor(deps, res, {
          workflow: discoveryWorkflow,
          workflowId: DISCOVERY_WORKFLOW_ID,
          args: [{ runId: run.id }],
          location: `/api/discovery/queue?run_id=${run.id}`,
          what: 'a discovery run',
          forget: () => db.discoveryRun.delete({ where: { id: run.id } }),
        });
        await recordAudit(db, {
          actorId: actor.userId,
          action: 'discovery.run.started',
          subjectType: 'discovery_run',
          subjectId: run.id,
          detail: { ...params },
          requestId: actor.requestId,
        });
        const { run_id: workflowRunId, ...workflow } = started;
        return { ...discoveryRunOut(run), ...workflow, workflow_run_id: workflowRunId };
      },
    )
    .get(
      '/api/discovery/queue',
      {
        summary:
          'Findings, best score first (pass next_cursor back as cursor), filtered by state, kind, run and session; each with its evidence',
        access: 'annotator',
        query: QueueQuery,
      },
      async ({ query }) => {
        const after = query.cursor ? decodeQueueCursor(query.cursor) : null;
        const rows = await db.discoveryCandidate.findMany({
          where: {
            ...(query.state ? { state: query.state } : {}),
            ...(query.kind ? { kind: query.kind } : {}),
            ...(query.run_id ? { runId: query.run_id } : {}),
            ...(query.session_id ? { sessionId: query.session_id } : {}),
            ...(after
              ? { OR: [{ score: { lt: after.score } }, { score: after.score, id: { gt: after.id } }] }
              : {}),
          },
          orderBy: [{ score: 'desc' }, { id: 'asc' }],
          take: query.limit + 1,
        });
        const page = rows.slice(0, query.limit);
        return {
          items: page.map(candidateOut),
          limit: query.limit,
          next_cursor: rows.length > query.limit ? encodeQueueCursor(page.at(-1)!) : null,
        };
      },
    )
    .post(
      '/api/discovery/{candidate_id}/state',
      {
        summary:
          "A reviewer's verdict on a finding (CandidateStateIn): triaged, novel_class (tag: the class it would be), known (tag: the ontology class it is), dismissed, or new again; audited",
        access: 'reviewer',
        params: z.strictObject({ candidate_id: z.uuid() }),
        body: { name: 'CandidateStateIn', schema: CandidateStateIn },
        statuses: {
          404: 'no such finding',
          422: 'a tag missing for novel_class or known, or known naming no ontology class',
        },
      },
      async ({ params, body, principal, req }) => {
        const found = await db.discoveryCandidate.findUnique({ where: { id: params.candidate_id } });
        if (!found) throw new NotFoundError(`no discovery candidate ${params.candidate_id}`);
        const tag = body.tag ?? null;
        if ((body.state === 'novel_class' || body.state === 'known') && !tag)
          throw new InputError(`${body.state} needs a tag`, [
            { field: 'body.tag', message: `required for ${body.state}` },
          ]);
        if (
          body.state === 'known' &&
          !(await db.ontologyClass.findFirst({ where: { name: tag!, retiredAt: null } }))
        )
          throw new RefusedError(`${tag} is not an ontology class: tag it novel_class instead`);
        const decided = body.state !== 'new';
        const saved = await db.discoveryCandidate.update({
          where: { id: found.id },
          data: {
            state: body.state,
            tag,
            decidedBy: decided ? principal.userId : null,
            decidedAt: decided ? new Date() : null,
          },
        });
        await recordAudit(db, {
          actorId: principal.userId,
          action: 'discovery.candidate.state',
          subjectType: 'discovery_candidate',
          subjectId: found.id,
          detail: { from: found.state, to: body.state, tag },
          requestId: String(req.id),
        });
        return candidateOut(saved);
      },
    );
}
