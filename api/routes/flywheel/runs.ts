import { listFlywheelRuns } from '../../../activities/flywheel/runs';
import { FLYWHEEL_STAGES, STAGE_INFO, STAGES_OF, FLYWHEEL_KINDS } from '../../../core/flywheel/stages';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../http/actor';
import { answerFlywheelStart } from '../../http/flywheel-start';
import { RouteGroup, uuidParams } from '../../http/route-group';
import { FlywheelRunIn, StagesQuery } from './runs-validators';

/** What each stage does, which kinds run it, and the child workflow it runs as. */
const STAGE_DEFINITIONS = FLYWHEEL_STAGES.map((stage) => ({
  stage,
  ...STAGE_INFO[stage],
  kinds: FLYWHEEL_KINDS.filter((k) => STAGES_OF[k].includes(stage)),
}));

/** The `flywheel` group's runs (docs/flywheel.md): a session through the whole flywheel, and the stages of every run. */
export function createFlywheelRunRoutes(deps: AppDeps): RouteGroup {
  return new RouteGroup('flywheel')
    .post(
      '/api/flywheel/session/{session_id}/run',
      {
        summary:
          'Run one session through the flywheel as one parent workflow (flywheel-session-<session_id>): ingest (waits until ingested) → auto-label (reused unless relabel) → review routing (optionally waits) → export → train a challenger → the promotion gate, each the platform’s own workflow as a child; 202, Location: its stages',
        access: 'reviewer',
        params: uuidParams('session_id'),
        body: { name: 'FlywheelRunIn', schema: FlywheelRunIn },
        successStatus: 202,
        statuses: {
          404: 'no such session or gold set',
          409: 'a flywheel run of this session is already running; the kill switch is engaged',
          422: 'the session failed to ingest, is quarantined or has no frames; the gold set is not sealed or there is none',
          503: 'the workflow service does not answer',
        },
      },
      async ({ params, body, principal, req, res }) =>
        answerFlywheelStart(deps, res, {
          kind: 'session',
          sessionId: params.session_id,
          request: body,
          actor: actorOf(principal, req),
        }),
    )
    .get(
      '/api/flywheel/stages',
      {
        summary:
          'The flywheel’s stages (what each does, the kinds that run it, its child workflow) and its runs newest first with each stage’s state, times and what it made; by id cursor',
        access: 'annotator',
        query: StagesQuery,
        statuses: { 404: 'no such run (run_id)' },
      },
      async ({ query }) => ({ stages: STAGE_DEFINITIONS, ...(await listFlywheelRuns(deps.db, query)) }),
    );
}
