import fs from 'node:fs';
import os from 'node:os';
import { temporal } from '@temporalio/proto';
import type { Connection } from '@temporalio/client';
import type { AppConfig } from '../../core/config';
import type { Db } from '../db';
import { KILLSWITCH_JOB_KINDS } from '../govern/killswitch';
import { jobsInFlight } from '../jobs/list';

/**
 * What the platform runs on, read when asked (docs/hardening.md): this API process's host (CPU,
 * memory), the disks its data lives on, the GPU slot, the work queued and the Temporal task queues.
 */

const TASK_QUEUE_TYPES = {
  workflow: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
  activity: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_ACTIVITY,
} as const;

const num = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));

async function disk(role: string, dir: string) {
  try {
    const s = await fs.promises.statfs(dir);
    const total = s.blocks * s.bsize;
    const free = s.bavail * s.bsize;
    return {
      role,
      path: dir,
      total_bytes: total,
      free_bytes: free,
      used_fraction: total ? 1 - free / total : null,
    };
  } catch (err) {
    // A configured folder that is not there is reported as such, not left out.
    return { role, path: dir, error: (err as NodeJS.ErrnoException).code ?? String(err) };
  }
}

/** One task queue of each type: its pollers (workers) and the backlog Temporal reports. */
async function taskQueue(connection: Connection, namespace: string, name: string) {
  try {
    const types = Object.entries(TASK_QUEUE_TYPES);
    const described = await Promise.all(
      types.map(([, type]) =>
        connection.workflowService.describeTaskQueue({
          namespace,
          taskQueue: { name },
          taskQueueType: type,
          reportStats: true,
        }),
      ),
    );
    return {
      name,
      ...Object.fromEntries(
        described.map((r, i) => [
          types[i]![0],
          {
            pollers: r.pollers?.length ?? 0,
            backlog: num(r.stats?.approximateBacklogCount),
            backlog_age_seconds: num(r.stats?.approximateBacklogAge?.seconds),
            tasks_added_per_second: r.stats?.tasksAddRate ?? 0,
            tasks_dispatched_per_second: r.stats?.tasksDispatchRate ?? 0,
          },
        ]),
      ),
    };
  } catch (err) {
    // The rest of the report stands when Temporal does not answer; the queue says why it has no figures.
    return { name, error: `Temporal does not answer: ${(err as Error).message}` };
  }
}

export async function systemResources(deps: {
  db: Db;
  config: Pick<AppConfig, 'models' | 'ingest' | 'temporal'>;
  connection: Connection;
}) {
  const { db, config } = deps;
  const cpus = os.cpus();
  const usage = process.cpuUsage();
  const memory = process.memoryUsage();
  const [disks, slots, inFlight, queues] = await Promise.all([
    Promise.all([
      disk('models', config.models.dir),
      disk('temp', os.tmpdir()),
      ...config.ingest.allowedRoots.map((root) => disk('ingest root', root)),
    ]),
    db.gpuSlot.findMany({ orderBy: { device: 'asc' } }),
    jobsInFlight(db, KILLSWITCH_JOB_KINDS),
    Promise.all(
      [config.temporal.cpuTaskQueue, config.temporal.gpuTaskQueue].map((q) =>
        taskQueue(deps.connection, config.temporal.namespace, q),
      ),
    ),
  ]);
  const jobs: Record<string, { queued: number; running: number }> = {};
  for (const j of inFlight) {
    const k = (jobs[j.kind] ??= { queued: 0, running: 0 });
    if (j.state === 'queued' || j.state === 'running') k[j.state] += 1;
  }
  return {
    measured_at: new Date().toISOString(),
    host: { hostname: os.hostname(), platform: process.platform, uptime_seconds: Math.round(os.uptime()) },
    cpu: {
      cores: cpus.length,
      model: cpus[0]?.model ?? null,
      load_average: os.loadavg(),
      api_process_cpu_seconds: (usage.user + usage.system) / 1e6,
    },
    memory: {
      total_bytes: os.totalmem(),
      free_bytes: os.freemem(),
      used_fraction: 1 - os.freemem() / os.totalmem(),
      api_process_rss_bytes: memory.rss,
      api_process_heap_used_bytes: memory.heapUsed,
    },
    disks,
    gpu_slot: {
      inference_device: config.models.device,
      held: slots.map((s) => ({
        device: s.device,
        holder_kind: s.holderKind,
        holder_id: s.holderId,
        workflow_id: s.workflowId,
        session_id: s.sessionId,
        acquired_at: s.acquiredAt.toISOString(),
        heartbeat_at: s.heartbeatAt.toISOString(),
      })),
    },
    jobs_in_flight: jobs,
    task_queues: queues,
  };
}
