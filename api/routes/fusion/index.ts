import { z } from 'zod';
import {
  FUSION_PATHS,
  fuseDetections,
  type DetectorPath,
  type FusionPath,
  type PathRun,
} from '../../../core/fusion';
import { iou, type Box } from '../../../core/geometry';
import { distanceToAutoAccept, isUncertain, resolvePolicy, routeObject } from '../../../core/routing';
import { NotFoundError } from '../../../core/errors';
import { MACHINE_SOURCE_SPELLINGS } from '../../../core/objects/sources';
import { recordAudit } from '../../../activities/audit';
import { routingDefaults } from '../../../activities/autolabel/threshold-fits';
import type { Prisma } from '../../../generated/prisma/client';
import type { AppDeps } from '../../deps';
import { RouteGroup, uuidParams } from '../../http/route-group';

/** The spec does not show Detection; here it is one path's box on the object's frame (docs/autolabel.md). */
export const Detection = z.strictObject({
  path: z.enum(FUSION_PATHS),
  bbox: z.array(z.number()).length(4).meta({ description: '[x1, y1, x2, y2] in frame pixels' }),
  class_name: z.string().min(1).max(128),
  conf: z.number().min(0).max(1),
});
export const ConsensusIn = z.strictObject({
  fusion: Detection,
  auto_paths: z.array(Detection).min(1).max(32),
  fusion_run_id: z.string().min(1).max(200).nullable().default(null),
});
export const AgentPolicyIn = z.strictObject({
  auto_accept_conf: z.number().min(0).max(1).nullable().default(null),
  require_agreement: z.boolean().nullable().default(null),
  review_low: z.number().min(0).max(1).nullable().default(null),
});
/** Body of POST /api/fusion/uncertainty (not shown by the spec). */
export const UncertaintyIn = z.strictObject({
  session_id: z.uuid(),
  policy: AgentPolicyIn.default({ auto_accept_conf: null, require_agreement: null, review_low: null }),
  limit: z.number().int().min(1).max(1000).default(100),
});

/** 404 unless the session exists: the fusion views answer for known sessions only. */
export async function requireSession(db: AppDeps['db'], sessionId: string): Promise<void> {
  if (!(await db.session.findUnique({ where: { id: sessionId }, select: { id: true } })))
    throw new NotFoundError(`no session ${sessionId}`);
}

const toBox = (b: number[]): Box => [
  Math.min(b[0]!, b[2]!),
  Math.min(b[1]!, b[3]!),
  Math.max(b[0]!, b[2]!),
  Math.max(b[1]!, b[3]!),
];
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** The `fusion` group: consensus of an object's paths, and the uncertain subset under a policy (thresholds: thresholds.ts). */
export function createFusionRoutes(deps: AppDeps): RouteGroup {
  const { db, config } = deps;
  return new RouteGroup('fusion')
    .post(
      '/api/fusion/object/{object_id}/consensus',
      {
        summary:
          "Re-fuses the given path detections with weighted box fusion and records the consensus (agreement, entropy) as the object's newest provenance",
        access: 'reviewer',
        params: uuidParams('object_id'),
        body: { name: 'ConsensusIn', schema: ConsensusIn },
        statuses: { 404: 'no such object' },
      },
      async ({ params, body, principal, req }) => {
        const id = params.object_id;
        const object = await db.annoObject.findUnique({ where: { id } });
        if (!object) throw new NotFoundError(`no object ${id}`);
        // Verifier entries vote like a detector here: the caller gives each path's box and class.
        const byPath = new Map<FusionPath, z.infer<typeof Detection>[]>();
        for (const d of body.auto_paths) byPath.set(d.path, [...(byPath.get(d.path) ?? []), d]);
        const runs: PathRun[] = [...byPath].map(([path, ds]) => ({
          path: path as DetectorPath,
          status: 'ran',
          detections: ds.map((d) => ({ box: toBox(d.bbox), className: d.class_name, score: d.conf })),
        }));
        const target = toBox(body.fusion.bbox);
        const clusters = fuseDetections(runs, { iouThreshold: config.autolabel.fusionIou });
        const best = clusters.map((c) => ({ c, o: iou(c.box, target) })).sort((a, b) => b.o - a.o)[0];
        const matched = best && best.o >= config.autolabel.fusionIou ? best.c : null;
        const consensus = {
          object_id: id,
          fusion_run_id: body.fusion_run_id,
          paths_ran: [...byPath.keys()],
          paths: matched?.paths ?? [],
          // No path matched: there is no consensus to measure, and an entropy of 0 would read as
          // "the paths agree", so nothing is recorded rather than zeros.
          agreement: matched?.agreement ?? null,
          entropy: matched?.entropy ?? null,
          class_name: matched?.className ?? null,
          class_agrees: matched ? matched.className === body.fusion.class_name : false,
          conf: matched?.conf ?? null,
          box: matched?.box ?? null,
          iou_with_fusion: best?.o ?? null,
          class_distribution: matched?.classDistribution ?? {},
        };
        await db.$transaction(async (tx) => {
          await tx.provenance.create({
            data: {
              objectId: id,
              paths: consensus.paths,
              rawConfidences: (matched?.rawConfidences ?? {}) as Prisma.InputJsonValue,
              agreement: consensus.agreement,
              entropy: consensus.entropy,
              qualityFlags: [
                'consensus',
                ...(matched ? [] : ['no_path_matches_fusion']),
                ...(matched && !consensus.class_agrees ? ['class_disagreement'] : []),
              ],
              reasonerTrace: {
                consensus: {
                  fusion: body.fusion,
                  fusion_run_id: body.fusion_run_id,
                  iou_with_fusion: consensus.iou_with_fusion,
                },
              } as Prisma.InputJsonValue,
            },
          });
          await recordAudit(tx, {
            actorId: principal.userId,
            action: 'object.consensus',
            subjectType: 'object',
            subjectId: id,
            detail: {
              agreement: consensus.agreement,
              entropy: consensus.entropy,
              fusion_run_id: body.fusion_run_id,
            },
            requestId: String(req.id),
          });
        });
        return consensus;
      },
    )
    .post(
      '/api/fusion/uncertainty',
      {
        summary:
          "The uncertain subset of a session's machine objects under a policy (AgentPolicyIn; nulls take the defaults): what the verifier would be asked, closest calls first",
        access: 'annotator',
        body: { name: 'UncertaintyIn', schema: UncertaintyIn },
        statuses: { 404: 'no such session' },
      },
      async ({ body }) => {
        await requireSession(db, body.session_id);
        const policy = resolvePolicy(body.policy, await routingDefaults(db, config));
        const objects = await db.annoObject.findMany({
          where: { frame: { sessionId: body.session_id }, source: { in: [...MACHINE_SOURCE_SPELLINGS] } },
          select: {
            id: true,
            frameId: true,
            conf: true,
            state: true,
            class: { select: { name: true } },
            provenance: { orderBy: { createdAt: 'desc' }, take: 1 },
          },
        });
        const rated = objects.flatMap((o) => {
          const p = o.provenance[0];
          const trace = (p?.reasonerTrace ?? {}) as { paths_ran?: unknown };
          const pathsRan = Array.isArray(trace.paths_ran) ? (trace.paths_ran as string[]) : [];
          const r = {
            conf: o.conf ?? 0,
            agreement: num(p?.agreement) ?? 0,
            entropy: num(p?.entropy) ?? 0,
            pathsRan,
            className: o.class.name,
          };
          if (!isUncertain(r, policy)) return [];
          const item = {
            object_id: o.id,
            frame_id: o.frameId,
            class_name: o.class.name,
            state: o.state,
            conf: r.conf,
            agreement: r.agreement,
            entropy: r.entropy,
            paths_ran: pathsRan,
            would_route: routeObject(r, policy),
          };
          return [{ item, distance: distanceToAutoAccept(r, policy) }];
        });
        rated.sort((a, b) => a.distance - b.distance || a.item.object_id.localeCompare(b.item.object_id));
        return {
          session_id: body.session_id,
          policy,
          considered: objects.length,
          uncertain: rated.length,
          objects: rated.slice(0, body.limit).map((r) => r.item),
        };
      },
    );
}
