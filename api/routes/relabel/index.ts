import { z } from 'zod';
import { listAgentRuns } from '../../../activities/agent-runs/list';
import { RELABEL_KINDS } from '../../../activities/relabel';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../http/actor';
import {
  RelabelIngestIn,
  RelabelStartIn,
  startRelabelCorpus,
  startRelabelImport,
  startRunRevert,
} from '../../http/agent-runs';
import { RouteGroup, uuidParams } from '../../http/route-group';
import { AgentRunsQuery } from '../agent';

const RelabelRunsQuery = AgentRunsQuery.omit({ kind: true }).extend({
  kind: z.enum(RELABEL_KINDS as [string, ...string[]]).optional(),
});

/**
 * The `relabel` group (docs/relabel.md): corpus relabels by the closed-set detector and imported
 * relabels, each one revertible AgentRun whose moved objects go to review.
 */
export function createRelabelRoutes(deps: AppDeps): RouteGroup {
  const { db } = deps;
  return new RouteGroup('relabel')
    .post(
      '/api/relabel/start',
      {
        summary:
          'Start a relabel of the listed sessions or of the corpus (202, Location: the run): the closed-set detector reclassifies each machine-made box of the chosen classes on the GPU slot; an object moves only when the detector is confident and clearly disagrees, and then goes to review with source relabel; one revertible AgentRun (kind relabel, workflow relabel-corpus)',
        access: 'reviewer',
        body: { name: 'RelabelStartIn', schema: RelabelStartIn },
        successStatus: 202,
        statuses: {
          409: 'a corpus relabel is already running, or the kill switch is engaged',
          422: 'a listed session does not exist, a class is not in the ontology, or the cost gate refuses',
          503: 'the workflow service does not answer',
        },
      },
      async ({ body, res, principal, req }) => startRelabelCorpus(deps, res, body, actorOf(principal, req)),
    )
    .post(
      '/api/relabel/ingest',
      {
        summary:
          'Bring in an external relabel as a run (202, Location: the run): each named object takes its new class and goes to review with source relabel, as one revertible AgentRun of kind relabel-import; objects a person made or that are rejected are skipped with the reason',
        access: 'reviewer',
        body: { name: 'RelabelIngestIn', schema: RelabelIngestIn },
        successStatus: 202,
        statuses: {
          409: 'the kill switch is engaged',
          422: 'an object does not exist or is named twice, or a class is not in the ontology',
          503: 'the workflow service does not answer',
        },
      },
      async ({ body, res, principal, req }) => startRelabelImport(deps, res, body, actorOf(principal, req)),
    )
    .get(
      '/api/relabel/runs',
      {
        summary:
          'Relabel runs (corpus and imported), newest first, by keyset pagination, filtered by kind and status',
        access: 'reviewer',
        query: RelabelRunsQuery,
      },
      async ({ query }) =>
        listAgentRuns(db, {
          kinds: query.kind ? [query.kind] : RELABEL_KINDS,
          status: query.status,
          limit: query.limit,
          cursor: query.cursor,
        }),
    )
    .post(
      '/api/relabel/runs/{run_id}/revert',
      {
        summary:
          'Undo a finished relabel run (202): its objects take back exactly the class, state, source and provenance they had; an object a person has reviewed since is kept',
        access: 'reviewer',
        params: uuidParams('run_id'),
        successStatus: 202,
        statuses: { 404: 'no such relabel run', 409: 'the run is running, reverting or already reverted' },
      },
      async ({ params, res, principal, req }) =>
        startRunRevert(deps, res, params.run_id, actorOf(principal, req), RELABEL_KINDS),
    );
}
