import { endRunningStage, initialStages, moveStage, STAGES_OF } from './stages';

describe('a flywheel run’s stage record', () => {
  it('lists every stage of its kind, pending, in order', () => {
    expect(initialStages('session').map((s) => [s.stage, s.state])).toEqual([
      ['ingest', 'pending'],
      ['autolabel', 'pending'],
      ['review', 'pending'],
      ['export', 'pending'],
      ['train', 'pending'],
      ['gate', 'pending'],
    ]);
    expect(initialStages('training_cycle').map((s) => s.stage)).toEqual(['export', 'train', 'gate']);
    expect(STAGES_OF.training_cycle.every((s) => STAGES_OF.session.includes(s))).toBe(true);
  });

  it('keeps the first start time when a retried step starts a stage again, and merges what it says', () => {
    let s = initialStages('training_cycle');
    s = moveStage(s, 'export', 'running', 't1', { export_job_id: 'e' });
    s = moveStage(s, 'export', 'running', 't2');
    expect(s[0]).toEqual({
      stage: 'export',
      state: 'running',
      started_at: 't1',
      finished_at: null,
      detail: { export_job_id: 'e' },
    });
    s = moveStage(s, 'export', 'done', 't3', { commit_id: 'c' });
    expect(s[0]).toMatchObject({
      state: 'done',
      started_at: 't1',
      finished_at: 't3',
      detail: { export_job_id: 'e', commit_id: 'c' },
    });
    expect(s[1]!.state).toBe('pending');
  });

  it('refuses a stage the kind does not run', () => {
    expect(() => moveStage(initialStages('training_cycle'), 'ingest', 'running', 't')).toThrow(
      /no stage ingest/,
    );
  });

  it('ends only the running stage when a run fails or is cancelled; later stages stay pending', () => {
    let s = initialStages('session');
    s = moveStage(moveStage(s, 'ingest', 'running', 't1'), 'ingest', 'done', 't2');
    s = moveStage(s, 'autolabel', 'running', 't3');
    const ended = endRunningStage(s, 'cancelled', 't4');
    expect(ended.map((x) => x.state)).toEqual([
      'done',
      'cancelled',
      'pending',
      'pending',
      'pending',
      'pending',
    ]);
    expect(ended[1]!.finished_at).toBe('t4');
    expect(ended[0]!.finished_at).toBe('t2');
  });
});
