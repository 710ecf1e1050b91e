import { recordAudit } from '../../../activities/audit';
import { readFlywheelTurn } from '../../../activities/flywheel/agent';
import { materializeGateDirectedRun } from '../../../activities/flywheel/gate-directed';
import { DomainError } from '../../../core/errors';
import { planFlywheelTurn, type FlywheelAction } from '../../../core/flywheel/agent';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../http/actor';
import { answerFlywheelStart, startFlywheelRun, type FlywheelStart } from '../../http/flywheel-start';
import { RouteGroup } from '../../http/route-group';
import { MaterializeIn } from '../flywheel/gate-directed-validators';
import { AgentFlywheelIn, TrainingCycleIn } from '../flywheel/runs-validators';

/** The `agent` group's flywheel routes (docs/flywheel.md). */
export function createAgentFlywheelRoutes(deps: AppDeps): RouteGroup {
  return new RouteGroup('agent')
    .post(
      '/api/agent/training/cycle',
      {
        summary:
          'One training cycle as one parent workflow (training-cycle-<run_id>): export the platform’s training data as a commit → train a challenger from the champion → the promotion gate on a sealed gold set; 202, Location: its stages',
        access: 'reviewer',
        body: { name: 'TrainingCycleIn', schema: TrainingCycleIn },
        successStatus: 202,
        statuses: {
          404: 'no such gold set',
          409: 'the kill switch is engaged',
          422: 'the gold set is not sealed, or there is none',
          503: 'the workflow service does not answer',
        },
      },
      async ({ body, principal, req, res }) =>
        answerFlywheelStart(deps, res, {
          kind: 'training_cycle',
          sessionId: null,
          request: body,
          actor: actorOf(principal, req),
        }),
    )
    .post(
      '/api/agent/flywheel',
      {
        summary:
          'One turn of the flywheel agent: from what the platform holds now it collects where the gate refused (materializes each open gate-directed run), takes new ingested drives through the flywheel (at most max_sessions session runs), or — with neither and nothing running — starts a training cycle when people reviewed since the last run; each action with why and what it did (or, with dry_run, would do). An action that is refused is reported and the others still run',
        access: 'reviewer',
        body: { name: 'AgentFlywheelIn', schema: AgentFlywheelIn },
        statuses: { 503: 'the workflow service does not answer' },
      },
      async ({ body, principal, req }) => {
        const actor = actorOf(principal, req);
        const state = await readFlywheelTurn(deps.db, body.max_sessions);
        const plan = planFlywheelTurn(state, { maxSessions: body.max_sessions });
        const judged = { gold_id: body.gold_id, training_epochs: body.training_epochs };
        const start = (s: Omit<FlywheelStart, 'actor' | 'request'>) =>
          startFlywheelRun(deps, { ...s, request: judged, actor });
        const act = async (a: FlywheelAction) => {
          switch (a.action) {
            case 'materialize_gate_directed':
              return materializeGateDirectedRun(deps, a.gate_directed_run_id, MaterializeIn.parse({}), actor);
            case 'run_session':
              return start({ kind: 'session', sessionId: a.session_id });
            case 'training_cycle':
              return start({ kind: 'training_cycle', sessionId: null });
            case 'idle':
              return null;
          }
        };
        const actions = [];
        for (const a of plan) {
          if (body.dry_run || a.action === 'idle') {
            actions.push({ ...a, outcome: body.dry_run ? 'planned' : 'nothing', result: null, error: null });
            continue;
          }
          try {
            actions.push({ ...a, outcome: 'done', result: await act(a), error: null });
          } catch (err) {
            // A refusal (quarantine, kill switch, a run already going) is this action's, not the turn's.
            if (!(err instanceof DomainError)) throw err;
            actions.push({ ...a, outcome: 'refused', result: null, error: err.message });
          }
        }
        await recordAudit(deps.db, {
          actorId: actor.userId,
          action: 'agent.flywheel',
          subjectType: 'flywheel',
          detail: {
            dry_run: body.dry_run,
            actions: actions.map(({ action, outcome, error }) => ({ action, outcome, error })),
          },
          requestId: actor.requestId,
        });
        return {
          dry_run: body.dry_run,
          state: {
            open_gate_directed: state.openGateDirected.length,
            new_sessions: state.newSessions.length,
            running: state.running,
            reviews_since_last_run: state.reviewsSinceLastRun,
          },
          actions,
        };
      },
    );
}
