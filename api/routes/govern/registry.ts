import { z } from 'zod';
import {
  promotableChallenger,
  promotionOut,
  revertPromotion,
  type PromotionRequest,
} from '../../../activities/registry/gate';
import { registerRunEvidence } from '../../../activities/registry/evidence';
import { registerModelFile, registryModelOut } from '../../../activities/registry/models';
import { completedGoldRun, namedRun } from '../../../activities/registry/runs';
import { sliceScopes } from '../../../activities/evalgov/scope';
import { currentChampion } from '../../../activities/models/artifacts';
import { findGold } from '../../../activities/quality/gold';
import { runnableModel } from '../../../activities/quality/inference-runs';
import { NotFoundError, UnavailableError } from '../../../core/errors';
import type { Prisma } from '../../../generated/prisma/client';
import { promotionWorkflow } from '../../../workflows/promotion';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../http/actor';
import { RouteGroup } from '../../http/route-group';
import { limitParam } from '../../http/session-reads';
import { startWorkflow } from '../../http/start-workflow';
import { ModelVersionIn } from '../models/validators';

/** Bodies and queries of the registry and promotion routes (the spec shows none; docs/promotion.md). */
export const RegisterIn = z.strictObject({
  model_version: ModelVersionIn,
  key: z
    .string()
    .min(1)
    .max(1000)
    .regex(
      /^(?!s3:)[A-Za-z0-9!_.*'()@%+=/-]+$/,
      "a key of the models bucket (letters, digits and !_.*'()@%+=/-), not a URI",
    )
    .optional()
    .meta({ description: 'key of the ONNX file in the models bucket; default models/<version>/model.onnx' }),
  name: z.string().trim().min(1).max(200).optional(),
  task: z.enum(['detection']).default('detection'),
  parent_version: ModelVersionIn.nullish(),
  dataset_commit_id: z.string().min(1).max(200).nullish(),
  notes: z.string().max(4000).nullish(),
});

export const RegisterRunIn = z.strictObject({
  run_id: z.uuid().meta({ description: 'a completed inference run of a registered model version' }),
  gold_id: z.uuid().meta({ description: 'the sealed gold set it is evidence on' }),
});

export const PromoteIn = z
  .strictObject({
    challenger_version: ModelVersionIn.optional(),
    gold_id: z.uuid().optional().meta({ description: 'the sealed gold set both models are judged on' }),
    challenger_run_id: z
      .uuid()
      .optional()
      .meta({ description: 'a completed run of the challenger to judge it by' }),
    champion_run_id: z
      .uuid()
      .optional()
      .meta({ description: 'a completed run of the champion to compare with' }),
    slice_ids: z
      .array(z.uuid())
      .max(20)
      .optional()
      .meta({ description: 'curation slices compared besides the frame-context slices' }),
    revert: z.uuid().optional().meta({ description: 'undo this promotion instead (200)' }),
  })
  .superRefine((b, ctx) => {
    if (b.revert !== undefined) {
      for (const k of [
        'challenger_version',
        'gold_id',
        'challenger_run_id',
        'champion_run_id',
        'slice_ids',
      ] as const)
        if (b[k] !== undefined) ctx.addIssue({ code: 'custom', path: [k], message: 'not with revert' });
      return;
    }
    for (const k of ['challenger_version', 'gold_id'] as const)
      if (b[k] === undefined)
        ctx.addIssue({ code: 'custom', path: [k], message: 'required (or name a promotion to revert)' });
  })
  .meta({
    description:
      'Either a gate run (challenger_version and gold_id, optionally named runs and slices) or a revert of an earlier promotion',
  });

const RegistryQuery = z.strictObject({
  task: z.string().min(1).max(64).default('detection'),
  model_version: ModelVersionIn.optional().meta({
    description: 'only the decisions this version took part in',
  }),
  limit: limitParam(50, 500).meta({ description: 'decisions listed, newest first' }),
});

/** The registry and promotion routes of the `govern` group. */
export function createGovernRegistryRoutes(deps: AppDeps): RouteGroup {
  const { db, config } = deps;
  return new RouteGroup('govern')
    .get(
      '/api/govern/registry',
      {
        summary:
          "The registry of a task: its champion, candidates and retired models, and the gate's decisions (promoted, refused with the rule and reasons, reverted), newest first",
        access: 'annotator',
        query: RegistryQuery,
      },
      async ({ query }) => {
        // Before any promotion the shipped detector is the champion; without it there may be none yet.
        const champion = await currentChampion(deps, query.task).catch((err: unknown) => {
          if (err instanceof NotFoundError || err instanceof UnavailableError) return null;
          throw err;
        });
        const versionFilter: Prisma.PromotionWhereInput = query.model_version
          ? { OR: [{ challengerVersion: query.model_version }, { championVersion: query.model_version }] }
          : {};
        const [models, promotions] = await Promise.all([
          db.model.findMany({
            where: { task: query.task },
            orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
          }),
          db.promotion.findMany({
            where: { task: query.task, ...versionFilter },
            orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
            take: query.limit,
          }),
        ]);
        const inState = (state: string) => models.filter((m) => m.state === state).map(registryModelOut);
        return {
          task: query.task,
          champion: champion ? registryModelOut(champion) : null,
          candidates: inState('candidate'),
          retired: inState('retired'),
          promotions: promotions.map(promotionOut),
        };
      },
    )
    .post(
      '/api/govern/registry/register',
      {
        summary:
          'Register an ONNX file of the models bucket as a candidate model version: it must open with onnxruntime and fit the YOLOX decoder; its SHA-256 and size are recorded',
        access: 'reviewer',
        body: { name: 'RegisterIn', schema: RegisterIn },
        successStatus: 201,
        statuses: {
          404: 'no such file in the models bucket, parent model or dataset commit',
          409: 'model_version already registered',
          503: 'the configured device has no onnxruntime provider here',
        },
      },
      async ({ body, principal, req }) =>
        registryModelOut(await registerModelFile(deps, body, actorOf(principal, req))),
    )
    .post(
      '/api/govern/registry/register_run',
      {
        summary:
          "Register an inference run as its model version's evidence on a sealed gold set (201): it is evaluated on the whole set with the gate's evaluator and judged against the safety floors, the evaluation is recorded, and the gate and the champion sweep reuse the run there",
        access: 'reviewer',
        body: { name: 'RegisterRunIn', schema: RegisterRunIn },
        successStatus: 201,
        statuses: {
          404: "no such run or gold set, or the run's model version is not registered",
          409: 'the run has not completed, or the gold set is not sealed',
          503: 'the configured safety classes name no ontology class',
        },
      },
      async ({ body, principal, req }) => registerRunEvidence(deps, body, actorOf(principal, req)),
    )
    .post(
      '/api/govern/promote',
      {
        summary:
          'Run the promotion gate (workflow promotion-<challenger_version>, 202): challenger and champion are evaluated on a sealed gold set per slice (reusing completed runs, else running them on the GPU slot) and the challenger is refused, naming the rule (reconstructed_run, harness_divergence, safety_floor, not_better), or promoted — the champion retired — in one audited transaction. With `revert` (200): undo a promotion, restoring the champion it replaced',
        access: 'admin',
        body: { name: 'PromoteIn', schema: PromoteIn },
        alsoSucceeds: { 202: 'gate started' },
        statuses: {
          404: 'no such model, gold set, run, slice or promotion',
          409: 'a gate for this challenger is already running; the challenger is the champion; the gold set is not sealed; a named run has not completed; the promotion cannot be reverted',
          503: 'no champion can be had (the shipped detector is missing)',
        },
      },
      async ({ body, principal, req, res }) => {
        const actor = actorOf(principal, req);
        if (body.revert) return revertPromotion(db, body.revert, actor);
        const version = body.challenger_version!;
        const challenger = await promotableChallenger(db, version);
        const gold = await findGold(db, body.gold_id!);
        const champion = await currentChampion(deps, challenger.task);
        if (body.challenger_run_id) await namedRun(db, body.challenger_run_id, version, 'challenger_run_id');
        else if (!(await completedGoldRun(db, version, gold.id))) await runnableModel(db, version);
        if (body.champion_run_id)
          await namedRun(db, body.champion_run_id, champion.modelVersion, 'champion_run_id');
        await sliceScopes(db, body.slice_ids ?? [], gold.frameIds);
        const request: PromotionRequest = {
          challengerVersion: version,
          goldId: gold.id,
          challengerRunId: body.challenger_run_id ?? null,
          championRunId: body.champion_run_id ?? null,
          sliceIds: body.slice_ids ?? [],
          actor,
        };
        const started = await startWorkflow(deps, res, {
          workflow: promotionWorkflow,
          workflowId: `promotion-${version}`,
          args: [
            {
              request,
              gpuTaskQueue: config.temporal.gpuTaskQueue,
              heartbeatTimeoutSeconds: config.autolabel.heartbeatTimeoutSeconds,
            },
          ],
          location: `/api/govern/registry?task=${encodeURIComponent(challenger.task)}&model_version=${encodeURIComponent(version)}`,
          what: `a promotion gate for ${version}`,
        });
        return {
          ...started,
          challenger_version: version,
          champion_version: champion.modelVersion,
          gold_id: gold.id,
        };
      },
    );
}
