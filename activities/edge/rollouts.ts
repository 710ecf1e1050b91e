import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/activity';
import { ConflictError, NotFoundError, RefusedError } from '../../core/errors';
import { evaluateStageGate, type GateOutcome } from '../../core/edge/gate';
import {
  rollbackAssignments,
  stageDecision,
  type RollbackRule,
  type StageDecision,
} from '../../core/edge/rollback';
import { selectorMatches, type Labels } from '../../core/edge/stages';
import type { EdgeRollout, Prisma } from '../../generated/prisma/client';
import { recordAudit } from '../audit';
import type { Db } from '../db';
import type { ObjectStore } from '../storage/object-store';
import {
  artifactReports,
  asJson,
  dbNow,
  deviceNames,
  findArtifact,
  gateOf,
  historyOf,
  previousOf,
  rolloutWorkflowId,
  settingsOf,
  stagePlan,
  stagesOf,
  type RolloutSettings,
  type StageRecord,
} from './records';

/**
 * Staged rollouts (docs/edge-rollout.md). The API queues one (fleet snapshot and settings in an
 * EdgeRollout row) and starts workflow `rollout-<id>`; these are the workflow's steps: assign a
 * stage's devices, judge the stage on its telemetry, roll back or complete. Every step reads the
 * row again, so a retried step repeats nothing it already did.
 */

type Tx = Prisma.TransactionClient;

export interface RolloutRequest extends RolloutSettings {
  artifact_id: string;
  stages: number[];
}

/** Labels read back from a device row. */
const labelsOf = (labels: Prisma.JsonValue): Labels =>
  labels && typeof labels === 'object' && !Array.isArray(labels)
    ? Object.fromEntries(
        Object.entries(labels).filter((e): e is [string, string] => typeof e[1] === 'string'),
      )
    : {};

/**
 * Records a rollout of an artifact to the devices of its target that match the selector, with what
 * each was assigned before. One rollout per target runs at a time (a lock on the target keeps two
 * requests from both passing the check): a second one, of the same artifact or another, is refused.
 */
export async function queueRollout(
  deps: { db: Db; storage: ObjectStore },
  req: RolloutRequest,
  actorId: string,
): Promise<EdgeRollout> {
  const artifact = await findArtifact(deps.db, req.artifact_id);
  await deps.storage.client.statObject(deps.storage.bucket('models'), artifact.key).catch(() => {
    throw new RefusedError(
      `artifact ${artifact.id}: its file ${artifact.key} is not in the models bucket; there is nothing for the devices to download`,
    );
  });
  const { artifact_id: _artifactId, stages, ...settings } = req;
  return deps.db.$transaction(async (tx) => {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`edge-rollout:${artifact.target}`}))`;
    const running = await tx.edgeRollout.findFirst({ where: { target: artifact.target, status: 'running' } });
    if (running)
      throw new ConflictError(
        running.artifactId === artifact.id
          ? `artifact ${artifact.id} is already rolling out (rollout ${running.id}); advance or roll it back first`
          : `rollout ${running.id} of artifact ${running.artifactId} is running on target ${artifact.target}; one rollout per target runs at a time`,
      );
    const devices = (await tx.edgeDevice.findMany({ where: { target: artifact.target } })).filter((d) =>
      selectorMatches(labelsOf(d.labels), settings.selector),
    );
    if (devices.length === 0)
      throw new RefusedError(
        `no registered device of target ${artifact.target} matches the selector ${JSON.stringify(settings.selector)}; register devices first (POST /api/edge/devices)`,
      );
    const id = randomUUID();
    return tx.edgeRollout.create({
      data: {
        id,
        artifactId: artifact.id,
        target: artifact.target,
        previous: Object.fromEntries(devices.map((d) => [d.id, d.assignedArtifactId])),
        stages,
        gate: settings,
        status: 'running',
        workflowId: rolloutWorkflowId(id),
        createdBy: actorId,
      },
    });
  });
}

/** A rollout whose workflow did not start leaves no row behind. */
export async function discardRollout(db: Db, rolloutId: string): Promise<void> {
  await db.edgeRollout.deleteMany({ where: { id: rolloutId, history: { equals: [] } } });
}

/** The running rollout an operator signals, or why it cannot be signalled. */
export async function runningRollout(db: Db, rolloutId: string): Promise<EdgeRollout> {
  const rollout = await db.edgeRollout.findUnique({ where: { id: rolloutId } });
  if (!rollout) throw new NotFoundError(`no rollout ${rolloutId}`);
  if (rollout.status !== 'running')
    throw new ConflictError(
      `rollout ${rolloutId} is ${rollout.status}${rollout.reason ? ` (${rollout.reason})` : ''}; only a running rollout takes an operator's action`,
    );
  return rollout;
}

async function lockRollout(tx: Tx, rolloutId: string): Promise<EdgeRollout> {
  const [row] = await tx.$queryRaw<
    Array<{ id: string }>
  >`SELECT id FROM edge_rollouts WHERE id = ${rolloutId}::uuid FOR UPDATE`;
  const rollout = row ? await tx.edgeRollout.findUnique({ where: { id: row.id } }) : null;
  if (!rollout) throw ApplicationFailure.nonRetryable(`no rollout ${rolloutId}`, 'RolloutNotFound');
  return rollout;
}

const withStage = (history: StageRecord[], stage: number, change: Partial<StageRecord>): StageRecord[] =>
  history.map((h) => (h.stage === stage ? { ...h, ...change } : h));

export interface RolloutOutcome {
  rollout_id: string;
  status: string;
  stage: number;
  rule: RollbackRule | null;
  reason: string | null;
  /** Devices whose assignment went back. */
  restored: number;
}

/**
 * Ends a rollout. Rolling back (or failing) puts every device the rollout moved back on what it had;
 * the stage that was running records why, unless its verdict is already there.
 */
async function endRollout(
  db: Db,
  rolloutId: string,
  end: { status: 'completed' | 'rolled_back' | 'failed'; rule: RollbackRule | null; reason: string | null },
): Promise<RolloutOutcome> {
  return db.$transaction(async (tx) => {
    const rollout = await lockRollout(tx, rolloutId);
    const outcome = (restored: number): RolloutOutcome => ({
      rollout_id: rollout.id,
      status: end.status,
      stage: rollout.stage,
      rule: end.rule,
      reason: end.reason,
      restored,
    });
    if (rollout.status !== 'running')
      return { ...outcome(0), status: rollout.status, reason: rollout.reason };
    let restored = 0;
    if (end.status !== 'completed') {
      const previous = previousOf(rollout);
      const current = await tx.edgeDevice.findMany({
        where: { id: { in: Object.keys(previous) } },
        select: { id: true, assignedArtifactId: true },
      });
      const moves = rollbackAssignments(previous, current, rollout.artifactId);
      for (const m of moves)
        await tx.edgeDevice.update({ where: { id: m.deviceId }, data: { assignedArtifactId: m.artifactId } });
      restored = moves.length;
    }
    const now = await dbNow(tx);
    const history = historyOf(rollout);
    const open = history.find((h) => h.stage === rollout.stage && h.ended_at === null);
    await tx.edgeRollout.update({
      where: { id: rollout.id },
      data: {
        status: end.status,
        reason: end.rule ? `${end.rule}: ${end.reason}` : end.reason,
        finishedAt: now,
        history: asJson(
          open
            ? withStage(history, rollout.stage, {
                ended_at: now.toISOString(),
                outcome: end.rule === 'operator' ? 'operator' : 'failed',
                passed: false,
                rule: end.rule,
                reason: end.reason,
              })
            : history,
        ),
      },
    });
    await recordAudit(tx, {
      actorId: null,
      action: `edge.rollout.${end.status}`,
      subjectType: 'edge_rollout',
      subjectId: rollout.id,
      detail: {
        artifact_id: rollout.artifactId,
        stage: rollout.stage,
        rule: end.rule,
        reason: end.reason,
        restored,
      },
    });
    return outcome(restored);
  });
}

/** The steps of workflow `rollout-<id>` (cpu queue). */
export function createRolloutSteps(db: Db) {
  return {
    /** Assigns the artifact to the stage's devices and opens the stage's record (once, however often retried). */
    async startRolloutStage(input: {
      rolloutId: string;
      stage: number;
    }): Promise<{ devices: number; percent: number }> {
      return db.$transaction(async (tx) => {
        const rollout = await lockRollout(tx, input.rolloutId);
        const devices = stagePlan(rollout)[input.stage];
        const percent = stagesOf(rollout)[input.stage];
        if (!devices || percent === undefined)
          throw ApplicationFailure.nonRetryable(
            `rollout ${rollout.id} has no stage ${input.stage}`,
            'RolloutNotFound',
          );
        const history = historyOf(rollout);
        if (rollout.status === 'running' && !history.some((h) => h.stage === input.stage)) {
          await tx.edgeDevice.updateMany({
            where: { id: { in: devices } },
            data: { assignedArtifactId: rollout.artifactId },
          });
          const names = await deviceNames(tx, devices);
          const record: StageRecord = {
            stage: input.stage,
            percent,
            devices,
            device_names: devices.map((id) => names.get(id) ?? id),
            started_at: (await dbNow(tx)).toISOString(),
            ended_at: null,
            outcome: null,
            passed: null,
            rule: null,
            reason: null,
            ended_by: null,
            telemetry: null,
          };
          await tx.edgeRollout.update({
            where: { id: rollout.id },
            data: { stage: input.stage, history: asJson([...history, record]) },
          });
        }
        return { devices: devices.length, percent };
      });
    },

    /**
     * Judges the stage on its devices' telemetry since it began. A decisive verdict (a breach, or
     * any verdict at the stage's end) is written into the stage's record with the figures it saw.
     */
    async evaluateRolloutStage(input: {
      rolloutId: string;
      stage: number;
      final: boolean;
      endedBy: string;
    }): Promise<{
      decision: StageDecision;
      outcome: GateOutcome;
      rule: RollbackRule | null;
      reason: string;
    }> {
      const rollout = await db.edgeRollout.findUnique({ where: { id: input.rolloutId } });
      const record = rollout && historyOf(rollout).find((h) => h.stage === input.stage);
      if (!rollout || !record)
        throw ApplicationFailure.nonRetryable(
          `rollout ${input.rolloutId} has not started stage ${input.stage}`,
          'RolloutNotFound',
        );
      if (
        record.ended_at !== null &&
        record.outcome &&
        record.outcome !== 'operator' &&
        record.outcome !== 'failed'
      )
        return {
          decision: record.passed ? 'advance' : 'rollback',
          outcome: record.outcome,
          rule: record.rule,
          reason: record.reason ?? '',
        };
      const artifact = await findArtifact(db, rollout.artifactId);
      const verdict = evaluateStageGate({
        devices: record.devices.map((id, i) => ({ id, name: record.device_names[i] ?? id })),
        reports: await artifactReports(db, rollout.artifactId, {
          from: new Date(record.started_at),
          deviceIds: record.devices,
        }),
        sha256: artifact.sha256,
        gate: gateOf(settingsOf(rollout)),
      });
      const decision = stageDecision(verdict.outcome, input.final);
      if (decision !== 'wait') {
        const { outcome, rule, reason, ...figures } = verdict;
        await db.edgeRollout.update({
          where: { id: rollout.id },
          data: {
            history: asJson(
              withStage(historyOf(rollout), input.stage, {
                ended_at: (await dbNow(db)).toISOString(),
                outcome,
                passed: decision === 'advance',
                rule,
                reason,
                ended_by: input.final ? input.endedBy : 'gate',
                telemetry: figures,
              }),
            ),
          },
        });
      }
      return { decision, outcome: verdict.outcome, rule: verdict.rule, reason: verdict.reason };
    },

    rollBackRollout: (input: { rolloutId: string; rule: RollbackRule; reason: string }) =>
      endRollout(db, input.rolloutId, { status: 'rolled_back', rule: input.rule, reason: input.reason }),

    completeRollout: (input: { rolloutId: string }) =>
      endRollout(db, input.rolloutId, { status: 'completed', rule: null, reason: null }),

    /** The rollout itself failed (a step that cannot succeed): the devices go back as in a rollback. */
    async failRollout(input: { rolloutId: string; error: string }): Promise<void> {
      await endRollout(db, input.rolloutId, {
        status: 'failed',
        rule: 'rollout_failed',
        reason: input.error,
      });
    },
  };
}
