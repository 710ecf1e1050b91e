import { rewardClique, selectCliques } from '../../../activities/odd/bandit';
import {
  cliqueCoverage,
  cliquePriority,
  oddDiscover,
  CLIQUE_MAX_ROWS,
} from '../../../activities/odd/cliques';
import { oddComposition, oddGapReport } from '../../../activities/odd/composition';
import { MANEUVER_MAX_FRAMES, tagManeuver } from '../../../activities/odd/maneuver';
import type { OddScope } from '../../../activities/odd/scope';
import { checkPredicate, checkSessions } from '../../../activities/curation/slice-query';
import type { OddAttribute } from '../../../core/odd/attributes';
import type { OddRequirement } from '../../../core/odd/gaps';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../http/actor';
import { RouteGroup } from '../../http/route-group';
import {
  CliqueRewardIn,
  CliquesQuery,
  CompositionQuery,
  DiscoverQuery,
  ManeuverIn,
  OddCliqueSelectIn,
  OddGapsIn,
  PriorityQuery,
} from './validators';

/** The `coverage (ODD)` group: composition, gaps, cliques, the clique bandit, priority, manoeuvre tags, discovery (docs/odd-coverage.md). */
export function createOddRoutes(deps: AppDeps): RouteGroup {
  const { db } = deps;
  /** The scope as asked, once its sessions exist (404) and its classes are ontology classes (422). */
  const scopeOf = async (
    given: { session_ids?: string[]; classes?: string[] },
    where: 'query' | 'body',
  ): Promise<OddScope> => {
    await checkSessions(db, given.session_ids, `${where}.session_ids`);
    if (given.classes) await checkPredicate(db, { classes: given.classes }, where);
    return { sessionIds: given.session_ids, classes: given.classes };
  };
  const scoped = { 404: 'a session of session_ids does not exist' };
  return new RouteGroup('coverage (ODD)')
    .get(
      '/api/odd/composition',
      {
        summary:
          'The corpus over ODD attributes (lighting from exposure; weather, time_of_day, road_type, maneuver from recorded context; scene_density from objects): frames, share, sessions and objects by l1 per value',
        access: 'annotator',
        query: CompositionQuery,
        statuses: scoped,
      },
      async ({ query }) => oddComposition(db, await scopeOf(query, 'query')),
    )
    .post(
      '/api/odd/odd/gaps',
      {
        summary:
          'Gaps against a target ODD: each required value with its frames, share and status; the values under target first by frames short (the frames carrying it that would have to be added)',
        access: 'reviewer',
        body: { name: 'OddGapsIn', schema: OddGapsIn },
        statuses: scoped,
      },
      async ({ body }) => {
        const requirements: OddRequirement[] = Object.entries(body.target).flatMap(([attribute, values]) =>
          Object.entries(values ?? {}).map(([value, b]) => ({
            attribute: attribute as OddAttribute,
            value,
            ...b,
          })),
        );
        return oddGapReport(db, await scopeOf(body, 'body'), requirements);
      },
    )
    .get(
      '/api/odd/cliques',
      {
        summary: `Cliques (combinations of 2 or 3 attribute values) with their frames, sessions, objects and lift against independence; at most ${CLIQUE_MAX_ROWS} cliques read, limit ≤ 1000 answered`,
        access: 'annotator',
        query: CliquesQuery,
        statuses: scoped,
      },
      async ({ query }) =>
        cliqueCoverage(db, await scopeOf(query, 'query'), {
          attributes: query.attributes,
          sizes: query.sizes,
          includeUnknown: query.include_unknown,
          minFrames: query.min_frames,
          order: query.order,
          limit: query.limit,
        }),
    )
    .post(
      '/api/odd/cliques/select',
      {
        summary:
          'Allocate a label budget across cliques by Thompson sampling over their Beta posteriors, each allocation explained (posterior, draws won, exploration); writes nothing',
        access: 'reviewer',
        body: { name: 'OddCliqueSelectIn', schema: OddCliqueSelectIn },
        statuses: scoped,
      },
      async ({ body }) =>
        selectCliques(db, {
          budget: body.budget,
          cliques: body.cliques,
          candidates: body.candidates,
          seed: body.seed,
          scope: await scopeOf(body, 'body'),
        }),
    )
    .post(
      '/api/odd/cliques/reward',
      {
        summary:
          "Record a clique's observed outcome: (recall_after − recall_before) per 100 allocated labels updates its Beta posterior; a null recall records the reward but observes nothing",
        access: 'reviewer',
        body: { name: 'CliqueRewardIn', schema: CliqueRewardIn },
        successStatus: 201,
      },
      async ({ body, principal, req }) =>
        rewardClique(
          db,
          {
            clique: body.clique,
            allocated: body.allocated,
            recallBefore: body.recall_before,
            recallAfter: body.recall_after,
          },
          actorOf(principal, req),
        ),
    )
    .get(
      '/api/odd/priority',
      {
        summary:
          'Cliques ranked by where labelling helps most: score = coverage (1 / (1 + frames / target_frames)) × bandit posterior mean × rarity (1 − share of the rarest value), each term explained',
        access: 'annotator',
        query: PriorityQuery,
        statuses: scoped,
      },
      async ({ query }) =>
        cliquePriority(db, await scopeOf(query, 'query'), {
          sizes: query.sizes,
          targetFrames: query.target_frames,
          limit: query.limit,
        }),
    )
    .post(
      '/api/odd/maneuver',
      {
        summary: `Tag a session's frame range (by index or timestamp, inclusive; at most ${MANEUVER_MAX_FRAMES} frames) with a manoeuvre, written to each frame's context.maneuver and audited`,
        access: 'reviewer',
        body: { name: 'ManeuverIn', schema: ManeuverIn },
        statuses: { 404: 'no such session' },
      },
      async ({ body, principal, req }) =>
        tagManeuver(
          db,
          {
            sessionId: body.session_id,
            maneuver: body.maneuver,
            range:
              body.from_index !== undefined
                ? { by: 'index', from: body.from_index, to: body.to_index! }
                : { by: 'timestamp_ms', from: body.from_ms!, to: body.to_ms! },
          },
          actorOf(principal, req),
        ),
    )
    .get(
      '/api/odd/discover',
      {
        summary:
          'Under-represented or unseen: vocabulary values no frame carries, pairs of seen values no frame combines (most expected first), and pairs under min_share of the frames (lowest lift first)',
        access: 'annotator',
        query: DiscoverQuery,
        statuses: scoped,
      },
      async ({ query }) =>
        oddDiscover(db, await scopeOf(query, 'query'), {
          attributes: query.attributes,
          minShare: query.min_share,
          limit: query.limit,
        }),
    );
}
