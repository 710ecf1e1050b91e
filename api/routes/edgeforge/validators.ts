import { z } from 'zod';
import { AUDIT_MAX_CLAIMS } from '../../../activities/edgeforge/reads';
import { DEFAULT_AUDIT_TOLERANCE, LATENCY_STATS, PRECISIONS } from '../../../core/edgeforge';
import { booleanParam, limitParam } from '../../http/session-reads';

/** Bodies and queries of the edge-forge routes (docs/edgeforge.md). */

/** Bounds that keep one forge run short: timed runs, warm-up, threads, sustained seconds, grid size. */
export const FORGE_LIMITS = {
  runs: 200,
  warmup: 20,
  threads: 64,
  thermalSeconds: 60,
  windows: 20,
  pruneGrid: 6,
  pruneMax: 0.9,
} as const;

const ms = z.number().min(0).max(3_600_000);

/** Latency figures in milliseconds; those given must be ordered (min ≤ p50 ≤ p90 ≤ p99 ≤ max). */
export const LatencyIn = z
  .strictObject({
    p50: ms.optional(),
    p90: ms.optional(),
    p99: ms.optional(),
    mean: ms.optional(),
    min: ms.optional(),
    max: ms.optional(),
  })
  .superRefine((l, ctx) => {
    const order = (['min', 'p50', 'p90', 'p99', 'max'] as const).filter((k) => l[k] !== undefined);
    for (let i = 1; i < order.length; i++)
      if (l[order[i - 1]!]! > l[order[i]!]!)
        ctx.addIssue({ code: 'custom', path: [order[i]!], message: `must not be below ${order[i - 1]}` });
  });

const modelVersion = z.string().trim().min(1).max(200);
const target = z.string().trim().min(1).max(64);

const timing = {
  warmup: z.int().min(0).max(FORGE_LIMITS.warmup).default(3).meta({ description: 'untimed runs first' }),
  runs: z.int().min(1).max(FORGE_LIMITS.runs).default(20).meta({ description: 'timed runs' }),
  threads: z
    .int()
    .min(1)
    .max(FORGE_LIMITS.threads)
    .optional()
    .meta({ description: "onnxruntime's intra-op threads; default one per CPU of this host" }),
  frame_id: z.uuid().optional().meta({
    description: "the real frame the model is timed on; default the gold set's first frame",
  }),
};

const precisions = (fallback: Array<(typeof PRECISIONS)[number]>) =>
  z.array(z.enum(PRECISIONS)).min(1).max(PRECISIONS.length).default(fallback);

export const BenchIn = z
  .strictObject({
    model_version: modelVersion,
    target,
    latency_ms: LatencyIn.meta({
      description:
        'the figures a device reports (ms): p50, p90, p99, mean, min, max; with ?measure=true it may be empty',
    }),
    artifact_uri: z.string().trim().min(1).max(1000).nullable().default(null),
    power_w: z.number().min(0).max(100_000).nullable().default(null),
    throughput_fps: z.number().min(0).max(10_000_000).nullable().default(null),
    artifact_id: z.uuid().optional().meta({
      description: 'the edge artifact the figures are about; required to measure',
    }),
    ...timing,
  })
  .meta({ description: 'figures reported by a device, and/or (?measure=true) an artifact to time here' });

export const BenchQuery = z.strictObject({
  measure: booleanParam.default(false).meta({
    description: 'also time artifact_id on this host with onnxruntime (a workflow: 202 + Location)',
  }),
});

export const EdgeExportIn = z.strictObject({
  target: target.default('cpu-x86_64'),
  gold_id: z.uuid().optional().meta({
    description: 'the sealed gold set the accuracy check runs on; default the newest sealed one',
  }),
  precisions: precisions(['fp32', 'int8']).meta({
    description: 'the builds: fp32 (graph-optimised), fp16 and int8 (Conv weights stored reduced)',
  }),
  ...timing,
});

export const CooptIn = z.strictObject({
  target,
  base_latency_ms: z.number().positive().max(3_600_000),
  base_map50: z.number().min(0).max(1),
  prune_grid: z
    .array(z.number().min(0).max(FORGE_LIMITS.pruneMax))
    .min(1)
    .max(FORGE_LIMITS.pruneGrid)
    .nullable()
    .default(null)
    .meta({ description: 'fractions of each Conv’s weights set to zero by magnitude; null: [0, 0.25, 0.5]' }),
  model_version: modelVersion.optional().meta({ description: 'default: the detection champion' }),
  gold_id: z.uuid().optional(),
  precisions: precisions(['fp32', 'int8']),
  ...timing,
  runs: timing.runs.default(10),
});

export const ThermalIn = z.strictObject({
  artifact_id: z.uuid(),
  duration_s: z.number().min(1).max(FORGE_LIMITS.thermalSeconds).default(10),
  windows: z.int().min(2).max(FORGE_LIMITS.windows).default(5),
  threads: timing.threads,
  frame_id: timing.frame_id,
});

export const BudgetsIn = z.strictObject({
  latency_ms: z.number().positive().max(3_600_000).optional(),
  latency_stat: z.enum(LATENCY_STATS).optional(),
  memory_mb: z.number().positive().max(1_000_000).optional(),
  size_mb: z.number().positive().max(100_000).optional(),
  accuracy_loss: z.number().min(0).max(1).optional(),
});

export const GateIn = z.strictObject({
  artifact_id: z.uuid(),
  budgets: BudgetsIn.default({}).meta({ description: "overrides of the target's default budgets" }),
});

export const BenchmarksQuery = z.strictObject({
  model_version: modelVersion.optional(),
  target: target.optional(),
  source: z.enum(['measured', 'reported']).optional(),
  artifact_id: z.uuid().optional(),
  run_id: z
    .uuid()
    .optional()
    .meta({ description: 'an edge-forge run: the run itself is shown beside its benchmarks' }),
  limit: limitParam(50, 500),
  cursor: z.uuid().optional().meta({ description: 'next_cursor of the previous page' }),
});

export const AuditQuery = z.strictObject({
  model_version: modelVersion.optional(),
  target: target.optional(),
  // An empty `tolerance=` is no number: it must not read as 0.
  tolerance: z
    .preprocess((v) => (v === '' ? NaN : v), z.coerce.number().min(0).max(0.95))
    .default(DEFAULT_AUDIT_TOLERANCE)
    .meta({
      description: `a reported latency may be this share faster than the measured one and still reproduce (default ${DEFAULT_AUDIT_TOLERANCE})`,
    }),
  limit: limitParam(200, AUDIT_MAX_CLAIMS),
});

export const DeploymentsQuery = z.strictObject({
  model_version: modelVersion.optional(),
  target: target.optional(),
});
