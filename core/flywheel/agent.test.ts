import { planFlywheelTurn, type FlywheelTurnState } from './agent';

const quiet: FlywheelTurnState = {
  openGateDirected: [],
  newSessions: [],
  running: 0,
  reviewsSinceLastRun: 0,
};

describe('the flywheel agent’s turn', () => {
  it('collects where the gate refused first, then takes new drives through, at most maxSessions', () => {
    const plan = planFlywheelTurn(
      {
        ...quiet,
        openGateDirected: [{ run_id: 'g1', challenger_version: 'trained-a', targets: 3 }],
        newSessions: ['s1', 's2', 's3'],
        reviewsSinceLastRun: 9,
      },
      { maxSessions: 2 },
    );
    expect(plan.map((a) => a.action)).toEqual(['materialize_gate_directed', 'run_session', 'run_session']);
    expect(plan[0]).toMatchObject({ gate_directed_run_id: 'g1' });
    expect(plan[0]!.why).toMatch(/trained-a: 3 slice/);
    expect(plan.slice(1).map((a) => (a as { session_id: string }).session_id)).toEqual(['s1', 's2']);
  });

  it('retrains when people reviewed since the last run and nothing else is to do or running', () => {
    const plan = planFlywheelTurn({ ...quiet, reviewsSinceLastRun: 4 }, { maxSessions: 1 });
    expect(plan).toEqual([{ action: 'training_cycle', why: expect.stringMatching(/^4 review/) }]);
  });

  it('does not start a cycle beside a running run, nor when nothing was reviewed, and says why', () => {
    expect(planFlywheelTurn({ ...quiet, running: 2, reviewsSinceLastRun: 4 }, { maxSessions: 1 })).toEqual([
      { action: 'idle', why: expect.stringMatching(/2 flywheel run\(s\) still running/) },
    ]);
    expect(planFlywheelTurn(quiet, { maxSessions: 1 })).toEqual([
      { action: 'idle', why: expect.stringMatching(/no new drive/) },
    ]);
  });

  it('takes a new drive through even while other runs are running', () => {
    expect(planFlywheelTurn({ ...quiet, running: 1, newSessions: ['s9'] }, { maxSessions: 5 })).toEqual([
      { action: 'run_session', session_id: 's9', why: expect.any(String) },
    ]);
  });
});
