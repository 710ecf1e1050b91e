import { z } from 'zod';
import { ORDER_MOVES, ORDER_STATES } from '../../../core/flywheel/adaptive-orders';
import { parseClique } from '../../../core/odd/clique';
import { InputError } from '../../../core/errors';
import { limitParam } from '../../http/session-reads';

/**
 * Bodies and queries of the adaptive flywheel and fleet order routes (docs/flywheel-adaptive.md).
 * The spec names AdaptiveIn and its top-level fields; the objects inside its arrays are ours.
 */

const MAX_TARGETS = 200;
const MAX_BUDGET = 1_000_000;
const SLICE = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[^\s|][^|]*(\|[^\s|][^|]*)*$/, 'parts joined by |, none empty');
const scoping = {
  classes: z
    .array(z.string().regex(/^[a-z][a-z0-9_]{0,63}$/))
    .min(1)
    .max(50)
    .optional()
    .meta({
      description: 'ontology classes its batch is narrowed to, besides any class=<name> part of the slice',
    }),
  session_ids: z.array(z.uuid()).min(1).max(1000).optional().meta({
    description: 'sessions its batch is drawn from',
  }),
};

const Regression = z.strictObject({
  slice: SLICE.meta({
    description:
      'the slice that got worse, as the gate names it (all, weather=rain, class=pedestrian, slice <name>)',
  }),
  metric: z.string().regex(/^[a-z][a-z0-9_]{0,31}$/),
  drop: z.number().gt(0).max(1).meta({ description: 'how much the metric fell (champion − challenger)' }),
  frames: z.int().min(1).max(10_000_000).meta({ description: 'frames in the slice' }),
  ...scoping,
});

const OddGap = z.strictObject({
  clique: SLICE.superRefine((name, ctx) => {
    try {
      parseClique(name, 'clique');
    } catch (err) {
      if (!(err instanceof InputError)) throw err;
      ctx.addIssue({ code: 'custom', message: err.fieldErrors[0]?.message ?? err.message });
    }
  }).meta({ description: 'attribute=value parts joined by | (weather=rain|time_of_day=night)' }),
  frames_short: z.int().min(1).max(10_000_000).meta({ description: 'frames the corpus lacks' }),
  ...scoping,
});

const budgets = {
  total_label_budget: z
    .int()
    .min(0)
    .max(MAX_BUDGET)
    .meta({ description: 'labels (frames to review) to allocate' }),
  total_fleet_samples: z.int().min(0).max(MAX_BUDGET).meta({ description: 'fleet samples to allocate' }),
  safety_floor: z.int().min(0).max(MAX_BUDGET).default(0).meta({
    description: 'labels every safety slice gets before anything else',
  }),
  safety_slices: z.array(SLICE).max(50).nullable().default(null),
};

const unique =
  <T>(key: (t: T) => string, what: string) =>
  (items: T[], ctx: z.RefinementCtx) => {
    const seen = new Set<string>();
    items.forEach((item, i) => {
      const k = key(item);
      if (seen.has(k)) ctx.addIssue({ code: 'custom', path: [i], message: `duplicate ${what} ${k}` });
      seen.add(k);
    });
  };

export const AdaptiveIn = z.strictObject({
  regressions: z
    .array(Regression)
    .max(MAX_TARGETS)
    .superRefine(unique((r) => `${r.slice}:${r.metric}`, 'slice and metric')),
  odd_gaps: z
    .array(OddGap)
    .max(MAX_TARGETS)
    .superRefine(unique((g) => g.clique, 'clique')),
  ...budgets,
});

const cycleId = z.uuid().meta({ description: 'the adaptive cycle' });

export const CycleOrdersIn = z.strictObject({ cycle_id: cycleId });

export const DispatchIn = z.strictObject({
  cycle_id: cycleId,
  route_to_review: z.boolean().default(true).meta({
    description: "move the picked frames' auto-accepted machine objects to review",
  }),
});

export const AdaptiveAutoIn = z.strictObject({
  ...budgets,
  metric: z.enum(['map', 'ap50', 'ap75', 'ar100', 'precision', 'recall']).default('map'),
  min_drop: z.number().gt(0).max(1).default(0.01).meta({ description: 'a smaller fall is noise' }),
  min_share: z
    .number()
    .gt(0)
    .lt(1)
    .default(0.01)
    .meta({ description: 'ODD pairs under this share are gaps' }),
  max_gaps: z.int().min(1).max(100).default(20),
  route_to_review: z.boolean().default(true),
});

const page = {
  limit: limitParam(50, 200),
  cursor: z.uuid().optional().meta({ description: 'next_cursor of the previous page' }),
};

export const CyclesQuery = z.strictObject({
  state: z.enum(['planned', 'dispatching', 'dispatched']).optional(),
  ...page,
});

export const FleetOrdersQuery = z.strictObject({ state: z.enum(ORDER_STATES).optional(), ...page });

export const FleetOrderParams = z.object({
  order_id: z.uuid({ error: 'must be a UUID' }),
  status: z.enum(ORDER_MOVES),
});

export const FleetOrderMoveIn = z.strictObject({
  note: z.string().min(1).max(500).optional().meta({ description: 'why, for the audit trail' }),
});

export const FleetPlanIn = z.strictObject({
  samples: z.int().min(0).max(MAX_BUDGET).default(1000).meta({
    description: 'new samples shared across the highest-priority ODD cliques',
  }),
  cliques: z.int().min(1).max(100).default(10),
  cycle_id: z.uuid().nullable().default(null).meta({ description: 'the cycle to draw on; null: the latest' }),
  include_cycle: z.boolean().default(true),
});
