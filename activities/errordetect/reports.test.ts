import { DEFAULT_ERROR_DETECTION_OPTIONS } from '../../core/errordetect';
import { precisionFigure } from './reports';
import { DEFAULT_API_OPTIONS, toCoreOptions } from './runs';

describe('the detector precision figure', () => {
  it('is not measurable under 25 verdicts, and says how many candidates wait', () => {
    expect(precisionFigure(20, 4, 7)).toEqual({
      status: 'not_yet_measurable',
      reviewed: 24,
      confirmed: 20,
      dismissed: 4,
      pending: 7,
      precision: null,
      reason: 'not yet measurable: 24 of the 25 verdicts needed; 7 candidates await a verdict',
    });
    expect(precisionFigure(0, 0, 1).reason).toBe(
      'not yet measurable: 0 of the 25 verdicts needed; 1 candidate awaits a verdict',
    );
    expect(precisionFigure(3, 0, 0).reason).toBe('not yet measurable: 3 of the 25 verdicts needed');
  });

  it('is Laplace-smoothed from 25 verdicts up', () => {
    const f = precisionFigure(20, 5, 0);
    expect(f).toMatchObject({ status: 'measured', reviewed: 25, reason: null });
    expect(f.precision).toBeCloseTo(21 / 27, 12);
    // All confirmed is still under 1: 25 verdicts do not prove a perfect detector.
    expect(precisionFigure(25, 0, 3).precision).toBeCloseTo(26 / 27, 12);
  });
});

describe('detector options', () => {
  it("the API's defaults are the core's, by name", () => {
    expect(toCoreOptions(DEFAULT_API_OPTIONS)).toEqual(DEFAULT_ERROR_DETECTION_OPTIONS);
  });
});
