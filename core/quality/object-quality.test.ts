import {
  CRITIC_FACTOR,
  criticVetoesOf,
  objectQualityScore,
  type ObjectQualityEvidence,
} from './object-quality';

const machine: ObjectQualityEvidence = {
  source: 'fused',
  state: 'auto_accept',
  machine: true,
  conf: 0.9,
  calibratedConf: null,
  agreement: null,
  entropy: null,
  criticVetoes: [],
  controlVerdict: null,
  goldSets: 0,
  openErrorScores: [],
};

describe('object quality score', () => {
  it('takes a machine object at its (calibrated) confidence, lowered by disagreement', () => {
    expect(objectQualityScore(machine)).toMatchObject({ score: 0.9, basis: 'machine_confidence' });
    expect(objectQualityScore({ ...machine, calibratedConf: 0.6 }).score).toBeCloseTo(0.6);
    expect(objectQualityScore({ ...machine, agreement: 0.5 }).score).toBeCloseTo(0.9 * 0.75);
    expect(objectQualityScore({ ...machine, entropy: 0.4 }).score).toBeCloseTo(0.9 * 0.8);
    expect(objectQualityScore({ ...machine, entropy: 3 }).score).toBeCloseTo(0.45);
    expect(objectQualityScore({ ...machine, conf: null })).toMatchObject({
      score: 0.5,
      basis: 'machine_no_confidence',
    });
  });

  it('lets a verdict decide: wrong is 0 whatever else, correct or gold is 1', () => {
    expect(objectQualityScore({ ...machine, controlVerdict: 'wrong_class' })).toMatchObject({
      score: 0,
      basis: 'judged_wrong',
    });
    expect(objectQualityScore({ ...machine, state: 'rejected', goldSets: 1 }).score).toBe(0);
    expect(objectQualityScore({ ...machine, controlVerdict: 'correct' })).toMatchObject({
      score: 1,
      basis: 'control_correct',
    });
    const human = { ...machine, source: 'human', machine: false, state: 'accepted', conf: null };
    expect(objectQualityScore({ ...human, goldSets: 2 }).basis).toBe('gold');
    expect(objectQualityScore(human)).toMatchObject({ score: 0.95, basis: 'human_accepted' });
    expect(objectQualityScore({ ...human, state: 'submitted' })).toMatchObject({
      score: 0.8,
      basis: 'human_pending',
    });
  });

  it('lowers any object for open error candidates and critic vetoes', () => {
    const doubted = objectQualityScore({ ...machine, controlVerdict: 'correct', openErrorScores: [0.8, 2] });
    expect(doubted.score).toBeCloseTo(1 * 0.6 * 0.5);
    expect(doubted.factors).toHaveLength(2);
    expect(objectQualityScore({ ...machine, criticVetoes: ['geometric'] }).score).toBeCloseTo(
      0.9 * CRITIC_FACTOR,
    );
    expect(criticVetoesOf(['critic:geometric', 'unverified', 'critic:motion', 3])).toEqual([
      'geometric',
      'motion',
    ]);
    expect(criticVetoesOf(null)).toEqual([]);
  });

  it('stays within [0, 1]', () => {
    expect(objectQualityScore({ ...machine, conf: 1.7 }).score).toBe(1);
    expect(objectQualityScore({ ...machine, conf: -1 }).score).toBe(0);
  });
});
