import { z } from 'zod';
import { GATE_DIRECTED_STATES } from '../../../activities/flywheel/gate-directed';
import { limitParam } from '../../http/session-reads';
import { AdaptiveIn, DispatchIn } from './adaptive-validators';

/** Queries and bodies of the gate-directed runs (docs/flywheel-gate-directed.md). */

export const GateDirectedQuery = z.strictObject({
  state: z.enum(GATE_DIRECTED_STATES).optional(),
  limit: limitParam(50, 200),
  cursor: z.uuid().optional().meta({ description: 'next_cursor of the previous page' }),
});

/** The budgets an adaptive cycle takes; the targets are the run's own. */
export const MaterializeIn = z.strictObject({
  total_label_budget: AdaptiveIn.shape.total_label_budget
    .min(1)
    .default(200)
    .meta({ description: "labels (frames to review) shared across the run's targets" }),
  total_fleet_samples: AdaptiveIn.shape.total_fleet_samples
    .default(0)
    .meta({ description: "fleet samples shared across the run's targets" }),
  safety_floor: AdaptiveIn.shape.safety_floor,
  route_to_review: DispatchIn.shape.route_to_review,
});
