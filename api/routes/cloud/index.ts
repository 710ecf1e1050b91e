import { jobOut } from '../../../activities/autolabel/jobs';
import { trainingJobOut, trainingSlotQueue } from '../../../activities/training/jobs';
import type { AppDeps } from '../../deps';
import { RouteGroup } from '../../http/route-group';

/**
 * The `cloud` group, of which only the GPU slot is served so far. The holder is the slot row the
 * slot-holding activity writes (gpu_slot); the queue is the auto-label jobs whose workflow waits
 * for the slot (state `queued`), oldest first — the order the single gpu worker takes them in.
 */
export function createCloudRoutes(deps: AppDeps): RouteGroup {
  const { db, config } = deps;
  return new RouteGroup('cloud').get(
    '/api/gpu/slot',
    {
      summary:
        'The GPU slot: who holds it now (an auto-label session, an inference run or a training job) and which auto-label and training jobs wait for it, oldest first',
      access: 'annotator',
    },
    async () => {
      const [slots, queued, queuedTraining] = await Promise.all([
        db.gpuSlot.findMany({ orderBy: { device: 'asc' } }),
        db.autolabelJob.findMany({ where: { state: 'queued' }, orderBy: { createdAt: 'asc' }, take: 200 }),
        trainingSlotQueue(db),
      ]);
      const holderIds = { in: slots.map((s) => s.holderId) };
      const [autolabelHolders, trainingHolders] = await Promise.all([
        db.autolabelJob.findMany({ where: { id: holderIds } }),
        db.trainingJob.findMany({ where: { id: holderIds } }),
      ]);
      const holderJobs = new Map<string, object>([
        ...autolabelHolders.map((j) => [j.id, jobOut(j)] as const),
        ...trainingHolders.map((j) => [j.id, trainingJobOut(j)] as const),
      ]);
      const now = Date.now();
      const holders = slots.map((s) => {
        const job = holderJobs.get(s.holderId);
        const staleMs =
          (s.holderKind === 'training'
            ? config.training.heartbeatTimeoutSeconds
            : config.autolabel.heartbeatTimeoutSeconds) * 1000;
        return {
          device: s.device,
          kind: s.holderKind,
          holder_id: s.holderId,
          workflow_id: s.workflowId,
          session_id: s.sessionId,
          acquired_at: s.acquiredAt.toISOString(),
          heartbeat_at: s.heartbeatAt.toISOString(),
          // No heartbeat within the timeout: the worker died and Temporal will hand the work to a retry.
          stale: now - s.heartbeatAt.getTime() > staleMs,
          job: job ?? null,
        };
      });
      return {
        busy: holders.some((h) => !h.stale),
        holder: holders[0] ?? null,
        holders,
        queue: [
          ...queued.map((j) => ({
            kind: 'autolabel' as const,
            job_id: j.id,
            session_id: j.sessionId,
            workflow_id: j.workflowId,
            mode: j.mode,
            queued_at: j.createdAt.toISOString(),
          })),
          ...queuedTraining,
        ]
          .sort((a, b) => a.queued_at.localeCompare(b.queued_at))
          .map((q, i) => ({ position: i + 1, ...q })),
      };
    },
  );
}
