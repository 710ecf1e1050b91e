import { z } from 'zod';
import { MEASURE_DEFAULTS } from '../../core/quality/gold-measure';

/**
 * The bootstrap fields of a measurement against gold (defaults of the spec's BootstrapIn), shared
 * by the gold measure (api/routes/quality) and explore evaluations (api/routes/explore).
 */
export const bootstrapOptions = {
  alpha: z.number().gt(0).lt(1).default(MEASURE_DEFAULTS.alpha),
  n_boot: z.int().min(100).max(20_000).default(MEASURE_DEFAULTS.n_boot),
  seed: z
    .int()
    .min(0)
    .max(2 ** 31 - 1)
    .default(MEASURE_DEFAULTS.seed),
};
