import { MIN_CONTROL_SAMPLE } from '../control';
import { classPrecision, drawAuditSample, precisionFromCounts, type AuditCandidate } from './precision-audit';

const candidates: AuditCandidate[] = [];
for (let i = 0; i < 200; i++)
  candidates.push({
    object_id: `o${String(i).padStart(3, '0')}`,
    key: `k${i}`,
    class_name: i % 4 === 0 ? 'bus' : 'car',
  });

describe('precision audit draw', () => {
  it('draws the same per-class sample for the same seed whatever the order, another for another seed', () => {
    const a = drawAuditSample(candidates, 7, 10);
    const b = drawAuditSample([...candidates].reverse(), 7, 10);
    expect([...a.keys()]).toEqual(['bus', 'car']);
    expect(a.get('car')!.map((c) => c.object_id)).toEqual(b.get('car')!.map((c) => c.object_id));
    expect(a.get('bus')).toHaveLength(10);
    expect(a.get('bus')!.every((c) => c.class_name === 'bus')).toBe(true);
    const other = drawAuditSample(candidates, 8, 10);
    expect(other.get('car')!.map((c) => c.object_id)).not.toEqual(a.get('car')!.map((c) => c.object_id));
    // A class with fewer candidates than the size gives all of them.
    expect(drawAuditSample(candidates, 7, 100).get('bus')).toHaveLength(50);
  });
});

describe('precision of an audited class', () => {
  it('is not yet measurable under 25 verdicts and Laplace-smoothed from 25', () => {
    const few = classPrecision([...Array(24).fill('correct'), null, null]);
    expect(few).toMatchObject({ status: 'not_yet_measurable', reviewed: 24, pending: 2, precision: null });
    const enough = classPrecision([...Array(20).fill('correct'), ...Array(5).fill('bad_box')]);
    expect(enough).toMatchObject({ status: 'measured', reviewed: MIN_CONTROL_SAMPLE, correct: 20 });
    expect(enough.precision).toBeCloseTo(21 / 27);
    expect(precisionFromCounts(25, 20, 3)).toEqual({ ...enough, pending: 3 });
  });
});
