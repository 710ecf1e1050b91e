import fs from 'node:fs';
import path from 'node:path';
import { vehicleFrames } from './media/vehicles';
import { spawnWorkerProcess } from './worker-process';

/**
 * A fleet of edge agents (edge-agent/main.ts) as real processes on loopback, each with its own
 * cache folder, running on real photographs written to `<dir>/frames`; and a stop that always ends
 * them: SIGTERM (the agent sends a last report), then SIGKILL if one lingers.
 */
export type EdgeAgent = ReturnType<typeof spawnWorkerProcess> & { name: string };

export async function startEdgeAgents(opts: {
  apiUrl: string;
  token: string;
  target: string;
  count: number;
  dir: string;
  namePrefix?: string;
}): Promise<EdgeAgent[]> {
  const frames = path.join(opts.dir, 'frames');
  fs.mkdirSync(frames, { recursive: true });
  for (const [i, f] of (await vehicleFrames(3, { width: 640 })).entries())
    fs.writeFileSync(path.join(frames, `frame-${i}.jpg`), f.jpeg);
  return Array.from({ length: opts.count }, (_, i) => {
    const name = `${opts.namePrefix ?? 'edge-cam'}-${i}`;
    const agent = spawnWorkerProcess('edge-agent/main.ts', {
      EDGE_AGENT_API_URL: opts.apiUrl,
      EDGE_AGENT_TOKEN: opts.token,
      EDGE_AGENT_NAME: name,
      EDGE_AGENT_TARGET: opts.target,
      EDGE_AGENT_LABELS: `lane=${i}`,
      EDGE_AGENT_FRAMES: frames,
      EDGE_AGENT_POLL_SECONDS: '0.5',
      EDGE_AGENT_REPORT_SECONDS: '1',
      EDGE_AGENT_FPS: '4',
      EDGE_AGENT_RETRY_SECONDS: '2',
      EDGE_AGENT_CACHE_DIR: path.join(opts.dir, `cache-${i}`),
    });
    return { ...agent, name };
  });
}

export async function stopEdgeAgents(agents: readonly EdgeAgent[]): Promise<void> {
  await Promise.all(
    agents.map(async (a) => {
      if (a.proc.exitCode === null && a.proc.signalCode === null) a.proc.kill('SIGTERM');
      const timer = setTimeout(() => a.proc.kill('SIGKILL'), 10_000);
      await a.exited;
      clearTimeout(timer);
    }),
  );
}

/** The last lines each agent printed, for a failure message. */
export const agentTails = (agents: readonly EdgeAgent[]): string =>
  agents.map((a) => a.output().split('\n').slice(-8).join('\n')).join('\n---\n');
