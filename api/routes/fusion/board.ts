import { z } from 'zod';
import { disagreementOf, disagreementScore, type DisagreementKind } from '../../../core/fusion/disagreement';
import { rarity } from '../../../core/review/ranking';
import { MACHINE_SOURCE_SPELLINGS } from '../../../core/objects/sources';
import type { JobTally } from '../../../activities/autolabel/store';
import { Prisma } from '../../../generated/prisma/client';
import type { AppDeps } from '../../deps';
import { RouteGroup } from '../../http/route-group';
import { requireSession } from '.';

const DISAGREEMENT_KINDS = [
  'class_disagreement',
  'path_missing',
  'verifier_rejected',
  'verifier_relabelled',
] as const satisfies readonly DisagreementKind[];

/** Bodies and queries of the board and disagreement routes (the spec shows none; docs/autolabel.md). */
const BoardQuery = z.strictObject({
  session_id: z.uuid().optional().meta({ description: 'one session; absent: every session' }),
});
export const DisagreementRankIn = z.strictObject({
  session_id: z.uuid().nullable().default(null).meta({ description: 'one session; null: every session' }),
  kinds: z
    .array(z.enum(DISAGREEMENT_KINDS))
    .min(1)
    .nullable()
    .default(null)
    .meta({ description: 'only objects with one of these disagreements; null: any' }),
  limit: z.number().int().min(1).max(500).default(50),
});

const MACHINE = JSON.stringify(MACHINE_SOURCE_SPELLINGS);
/** The machine-source objects `o` (joined to their frames `f`) of one session, or of all when null. */
const machineObjectsOf = (sessionId: string | null): Prisma.Sql =>
  Prisma.sql`o.source IN (SELECT jsonb_array_elements_text(${MACHINE}::jsonb)) AND (${sessionId}::uuid IS NULL OR f.session_id = ${sessionId}::uuid)`;
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
const strings = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((s): s is string => typeof s === 'string') : [];

/**
 * The board and disagreement part of the `fusion` group: what auto-label produced and how its paths
 * agreed, per session or over all of them, and the objects whose paths disagreed, ranked.
 */
export function createFusionBoardRoutes(deps: AppDeps): RouteGroup {
  const { db } = deps;
  const checkSession = async (sessionId: string | null) => {
    if (sessionId) await requireSession(db, sessionId);
  };
  return new RouteGroup('fusion')
    .get(
      '/api/fusion/board',
      {
        summary:
          'Auto-label at a glance: machine objects by state and class, what each path proposed and how often it ran, agreement, critic vetoes, the verifier, controls and the active threshold fit',
        access: 'annotator',
        query: BoardQuery,
        statuses: { 404: 'no such session' },
      },
      async ({ query }) => {
        const sessionId = query.session_id ?? null;
        await checkSession(sessionId);
        const inScope = machineObjectsOf(sessionId);
        const [classes, proposers, agreement, jobs, controls, active] = await Promise.all([
          db.$queryRaw<Array<{ className: string; state: string; objects: number; meanConf: number | null }>>`
            SELECT k.name AS "className", o.state, count(*)::int AS objects, avg(o.conf) AS "meanConf"
              FROM objects o JOIN frames f ON f.id = o.frame_id JOIN ontology_classes k ON k.id = o.class_id
             WHERE ${inScope}
             GROUP BY k.name, o.state`,
          db.$queryRaw<Array<{ path: string; objects: number }>>`
            SELECT path, count(*)::int AS objects
              FROM objects o JOIN frames f ON f.id = o.frame_id
              JOIN LATERAL (SELECT paths FROM provenance WHERE object_id = o.id ORDER BY created_at DESC LIMIT 1) p ON true,
                   jsonb_array_elements_text(p.paths) AS path
             WHERE ${inScope}
             GROUP BY path`,
          db.$queryRaw<
            Array<{
              full: number;
              partial: number;
              singlePath: number;
              classDisagreement: number;
              meanAgreement: number | null;
            }>
          >`
            SELECT count(*) FILTER (WHERE p.agreement >= 1 AND jsonb_array_length(COALESCE(p.reasoner_trace->'paths_ran', '[]')) >= 2)::int AS full,
                   count(*) FILTER (WHERE p.agreement < 1)::int AS partial,
                   count(*) FILTER (WHERE jsonb_array_length(COALESCE(p.reasoner_trace->'paths_ran', '[]')) < 2)::int AS "singlePath",
                   count(*) FILTER (WHERE p.entropy > 0)::int AS "classDisagreement",
                   avg(p.agreement) AS "meanAgreement"
              FROM objects o JOIN frames f ON f.id = o.frame_id
              JOIN LATERAL (SELECT agreement, entropy, reasoner_trace FROM provenance WHERE object_id = o.id ORDER BY created_at DESC LIMIT 1) p ON true
             WHERE ${inScope}`,
          db.autolabelJob.findMany({
            where: sessionId ? { sessionId } : {},
            select: { state: true, framesDone: true, tally: true, finishedAt: true },
          }),
          db.controlSample.groupBy({
            by: ['verdict'],
            where: sessionId ? { sessionId } : {},
            _count: { _all: true },
          }),
          db.thresholdFit.findFirst({ where: { active: true }, select: { id: true } }),
        ]);

        const byState: Record<string, number> = {};
        const byClass = new Map<
          string,
          { class_name: string; objects: number; by_state: Record<string, number>; confSum: number }
        >();
        for (const r of classes) {
          byState[r.state] = (byState[r.state] ?? 0) + r.objects;
          const c = byClass.get(r.className) ?? {
            class_name: r.className,
            objects: 0,
            by_state: {},
            confSum: 0,
          };
          c.objects += r.objects;
          c.by_state[r.state] = r.objects;
          c.confSum += num(r.meanConf) * r.objects;
          byClass.set(r.className, c);
        }
        // Proposals and agreement are counted on each object's newest provenance (the fused record);
        // path runs, critic and verifier figures come from the jobs' tallies (what ran, per frame).
        const paths: Record<
          string,
          { proposed: number; frames: Record<string, number>; reason: string | null }
        > = {};
        const vetoes: Record<string, number> = {};
        let demoted = 0;
        let verifierAsked = 0;
        const jobStates: Record<string, number> = {};
        for (const job of jobs) {
          jobStates[job.state] = (jobStates[job.state] ?? 0) + 1;
          const t = job.tally as Partial<JobTally>;
          for (const [path, statuses] of Object.entries(t.paths ?? {})) {
            const p = (paths[path] ??= { proposed: 0, frames: {}, reason: null });
            for (const [status, n] of Object.entries(statuses))
              p.frames[status] = (p.frames[status] ?? 0) + n;
            p.reason ??= t.path_reasons?.[path] ?? null;
          }
          for (const [check, n] of Object.entries(t.vetoes ?? {})) vetoes[check] = (vetoes[check] ?? 0) + n;
          demoted += t.demoted ?? 0;
          verifierAsked += t.verifier_asked ?? 0;
        }
        for (const p of proposers)
          (paths[p.path] ??= { proposed: 0, frames: {}, reason: null }).proposed = p.objects;
        const a = agreement[0]!;
        const reviewed = controls.filter((c) => c.verdict !== null).reduce((s, c) => s + c._count._all, 0);
        return {
          session_id: sessionId,
          objects: { total: Object.values(byState).reduce((s, n) => s + n, 0), by_state: byState },
          classes: [...byClass.values()]
            .sort((x, y) => y.objects - x.objects || x.class_name.localeCompare(y.class_name))
            .map(({ confSum, ...c }) => ({ ...c, mean_conf: c.objects ? confSum / c.objects : null })),
          paths,
          agreement: {
            all_paths: a.full,
            partial: a.partial,
            single_path: a.singlePath,
            class_disagreement: a.classDisagreement,
            mean: a.meanAgreement,
          },
          critic: { vetoes, demoted },
          verifier: { asked: verifierAsked },
          jobs: {
            by_state: jobStates,
            frames_done: jobs.reduce((s, j) => s + j.framesDone, 0),
            last_finished_at:
              jobs
                .map((j) => j.finishedAt)
                .filter((d): d is Date => d !== null)
                .sort((x, y) => y.getTime() - x.getTime())[0]
                ?.toISOString() ?? null,
          },
          controls: {
            pending: controls.find((c) => c.verdict === null)?._count._all ?? 0,
            reviewed,
            correct: controls.find((c) => c.verdict === 'correct')?._count._all ?? 0,
          },
          active_threshold_fit_id: active?.id ?? null,
        };
      },
    )
    .post(
      '/api/fusion/disagreements/rank',
      {
        summary:
          'Machine objects whose paths disagreed (class split, a path that ran and stayed silent, the verifier rejecting or relabelling), ranked by disagreement × class rarity',
        access: 'annotator',
        body: { name: 'DisagreementRankIn', schema: DisagreementRankIn },
        statuses: { 404: 'no such session' },
      },
      async ({ body }) => {
        await checkSession(body.session_id);
        const session = body.session_id;
        const inScope = machineObjectsOf(session);
        const [candidates, counts] = await Promise.all([
          db.$queryRaw<
            Array<{
              id: string;
              frameId: string;
              sessionId: string;
              frameIndex: number;
              state: string;
              conf: number | null;
              className: string;
              agreement: number | null;
              entropy: number | null;
              paths: unknown;
              trace: unknown;
            }>
          >`
            SELECT o.id::text, o.frame_id::text AS "frameId", f.session_id::text AS "sessionId", f.index AS "frameIndex", o.state, o.conf,
                   k.name AS "className", p.agreement, p.entropy, p.paths, p.reasoner_trace AS trace
              FROM objects o JOIN frames f ON f.id = o.frame_id JOIN ontology_classes k ON k.id = o.class_id
              JOIN LATERAL (SELECT agreement, entropy, paths, reasoner_trace FROM provenance WHERE object_id = o.id ORDER BY created_at DESC LIMIT 1) p ON true
             WHERE ${inScope}
               AND (p.entropy > 0 OR p.agreement < 1 OR p.reasoner_trace->'verifier'->>'verdict' IN ('reject', 'relabel'))`,
          db.$queryRaw<Array<{ className: string; objects: number }>>`
            SELECT k.name AS "className", count(*)::int AS objects
              FROM objects o JOIN frames f ON f.id = o.frame_id JOIN ontology_classes k ON k.id = o.class_id
             WHERE ${inScope}
             GROUP BY k.name`,
        ]);
        const perClass = new Map(counts.map((c) => [c.className, c.objects]));
        const total = counts.reduce((s, c) => s + c.objects, 0);
        const ranked = candidates.flatMap((c) => {
          const trace = (c.trace ?? {}) as {
            paths_ran?: unknown;
            class_distribution?: unknown;
            verifier?: { verdict?: unknown } | null;
          };
          const classDistribution = (trace.class_distribution ?? {}) as Record<string, number>;
          const verdict = typeof trace.verifier?.verdict === 'string' ? trace.verifier.verdict : null;
          const d = disagreementOf({
            agreement: num(c.agreement),
            entropy: num(c.entropy),
            classDistribution,
            pathsRan: strings(trace.paths_ran),
            paths: strings(c.paths),
            verifierVerdict: verdict,
          });
          if (d.disagreement <= 0 || (body.kinds && !d.kinds.some((k) => body.kinds!.includes(k)))) return [];
          const classCount = perClass.get(c.className) ?? 1;
          return [
            {
              object_id: c.id,
              frame_id: c.frameId,
              session_id: c.sessionId,
              frame_index: c.frameIndex,
              class_name: c.className,
              state: c.state,
              conf: c.conf,
              agreement: num(c.agreement),
              entropy: num(c.entropy),
              kinds: d.kinds,
              silent_paths: d.silent,
              class_distribution: classDistribution,
              verifier_verdict: verdict,
              disagreement: d.disagreement,
              rarity: rarity(classCount, total),
              score: disagreementScore(d, classCount, total),
            },
          ];
        });
        ranked.sort((x, y) => y.score - x.score || x.object_id.localeCompare(y.object_id));
        return {
          session_id: session,
          considered: total,
          disagreeing: ranked.length,
          items: ranked.slice(0, body.limit),
        };
      },
    );
}
