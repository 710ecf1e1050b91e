import { z } from 'zod';
import { FLYWHEEL_KINDS } from '../../../core/flywheel/stages';
import { TURN_MAX_SESSIONS } from '../../../activities/flywheel/agent';
import { limitParam } from '../../http/session-reads';

/** Bodies and queries of flywheel runs (docs/flywheel.md); the spec shows none of their fields, so they are ours. */

const judged = {
  gold_id: z.uuid().nullable().default(null).meta({
    description: 'the sealed gold set the gate judges the challenger on; null: the newest sealed one',
  }),
  training_epochs: z
    .int()
    .min(1)
    .max(200)
    .default(10)
    .meta({ description: "epochs of the challenger's head fine-tuning" }),
};

export const FlywheelRunIn = z.strictObject({
  ...judged,
  relabel: z.boolean().default(false).meta({
    description: 'auto-label the session again even when it has a completed auto-label job (false: reuse it)',
  }),
  wait_for_review: z.boolean().default(false).meta({
    description:
      'wait at the review stage until none of the session’s objects is left in review (false: export what is accepted and auto-accepted now)',
  }),
});

export const TrainingCycleIn = z.strictObject(judged);

export const AgentFlywheelIn = z.strictObject({
  ...judged,
  dry_run: z.boolean().default(false).meta({ description: 'only say what the turn would do' }),
  max_sessions: z
    .int()
    .min(1)
    .max(TURN_MAX_SESSIONS)
    .default(1)
    .meta({ description: 'new sessions this turn takes through the flywheel' }),
});

export const StagesQuery = z.strictObject({
  run_id: z.uuid().optional().meta({ description: 'only this run (404 when there is none)' }),
  session_id: z.uuid().optional(),
  kind: z.enum(FLYWHEEL_KINDS).optional(),
  status: z.enum(['running', 'completed', 'failed', 'cancelled']).optional(),
  limit: limitParam(20, 100),
  cursor: z.uuid().optional().meta({ description: 'next_cursor of the previous page' }),
});
