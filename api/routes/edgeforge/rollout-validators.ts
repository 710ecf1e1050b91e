import { z } from 'zod';
import { stagesProblem } from '../../../core/edge/stages';
import { ADVANCE_MODES } from '../../../activities/edge';
import { LabelsIn } from '../edge/fleet-validators';

/** The body of POST /api/edgeforge/rollout (docs/edge-rollout.md): start a rollout, or act on a running one. */

export const DEFAULT_STAGES = [10, 50, 100];

export const RolloutGateIn = z
  .strictObject({
    max_p90_ms: z.number().positive().max(3_600_000).nullable().default(null).meta({
      description: 'p90 latency budget per device in ms; null: no latency budget',
    }),
    max_error_rate: z
      .number()
      .min(0)
      .max(1)
      .default(0.01)
      .meta({ description: 'failed frames / frames per device' }),
    min_frames: z.int().min(1).max(1_000_000).default(20).meta({
      description: 'frames a device must have run before its figures count',
    }),
    min_devices_reporting: z.int().min(1).max(100_000).nullable().default(null).meta({
      description: 'devices with min_frames needed to pass a stage; null: every device of the stage',
    }),
  })
  .meta({ description: 'the budgets every stage is judged on' });

export const ROLLOUT_ACTIONS = ['advance', 'rollback'] as const;

export const RolloutIn = z
  .strictObject({
    artifact_id: z.uuid().optional().meta({ description: 'start: the edge artifact to roll out' }),
    stages: z
      .array(z.number())
      .min(1)
      .max(20)
      .default(DEFAULT_STAGES)
      .superRefine((s, ctx) => {
        const problem = stagesProblem(s);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      })
      .meta({ description: 'cumulative fleet percentages, strictly increasing, ending at 100' }),
    gate: RolloutGateIn.prefault({}),
    advance: z.enum(ADVANCE_MODES).default('timer').meta({
      description:
        'timer: a stage ends after stage_seconds (or an operator advance); operator: only an operator ends it',
    }),
    stage_seconds: z
      .number()
      .positive()
      .max(7 * 24 * 3600)
      .optional()
      .meta({
        description: 'soak of a stage with advance timer; default config edge.stageSeconds',
      }),
    selector: LabelsIn.default({}).meta({
      description: "labels a device must carry to be in the rollout's fleet",
    }),
    rollout_id: z.uuid().optional().meta({ description: 'act: the running rollout' }),
    action: z.enum(ROLLOUT_ACTIONS).optional().meta({
      description:
        'advance: end the running stage now (its gate decides); rollback: abort, every device goes back',
    }),
    reason: z.string().min(1).max(500).optional().meta({ description: 'why an operator acts, recorded' }),
  })
  .superRefine((b, ctx) => {
    const issue = (path: string, message: string) => ctx.addIssue({ code: 'custom', path: [path], message });
    if (b.rollout_id === undefined) {
      if (b.artifact_id === undefined)
        issue('artifact_id', 'required to start a rollout (or rollout_id and action to act on one)');
      if (b.action !== undefined)
        issue('action', 'acts on a running rollout: give rollout_id, not artifact_id');
    } else {
      if (b.artifact_id !== undefined)
        issue('artifact_id', 'give artifact_id to start a rollout or rollout_id to act on one, not both');
      if (b.action === undefined)
        issue('action', `required with rollout_id: ${ROLLOUT_ACTIONS.join(' or ')}`);
    }
  })
  .meta({
    description:
      'start a staged rollout of an artifact (artifact_id, stages, gate, advance, stage_seconds, selector), or act on a running one (rollout_id, action, reason)',
  });
