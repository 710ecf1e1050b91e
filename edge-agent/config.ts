import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';

/**
 * The edge agent's settings (docs/edge-rollout.md, The edge agent): each from a command-line
 * option or its environment variable. The token comes only from the environment, so that it never
 * shows in a process list.
 */
const seconds = z.coerce.number().positive();

const AgentConfig = z.object({
  apiUrl: z.url().transform((u) => u.replace(/\/+$/, '')),
  token: z
    .string()
    .min(1, 'EDGE_AGENT_TOKEN is not set: give the agent the bearer token of an annotator account'),
  name: z.string().min(1),
  target: z.string().min(1),
  /** `key=value,key=value`: labels the device registers with. */
  labels: z
    .string()
    .default('')
    .transform((s, ctx) => {
      const pairs = s
        .split(',')
        .filter(Boolean)
        .map((p) => p.split('='));
      if (pairs.some((p) => p.length !== 2 || !p[0])) {
        ctx.addIssue({ code: 'custom', message: 'labels are key=value pairs separated by commas' });
        return z.NEVER;
      }
      return Object.fromEntries(pairs) as Record<string, string>;
    }),
  /** A folder of JPEG (or PNG) frames: the agent's stand-in for its camera. */
  frames: z.string().min(1),
  pollSeconds: seconds.default(10),
  reportSeconds: seconds.default(30),
  /** Most frames per second the model runs (a camera's rate). */
  fps: seconds.default(5),
  /** Threads onnxruntime may use for one inference. */
  threads: z.coerce.number().int().min(1).max(64).default(1),
  /** Score and NMS IoU of the YOLOX decode. */
  minScore: z.coerce.number().min(0).max(1).default(0.3),
  nmsIou: z.coerce.number().gt(0).max(1).default(0.45),
  /** How long an artifact that failed verification or loading waits before it is tried again. */
  retrySeconds: seconds.default(60),
  /** Where downloaded artifacts are kept (by artifact id), so a rollback back to one needs no download. */
  cacheDir: z.string().min(1),
  logLevel: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
});
export type AgentConfig = z.infer<typeof AgentConfig>;

const OPTIONS = {
  api: 'EDGE_AGENT_API_URL',
  name: 'EDGE_AGENT_NAME',
  target: 'EDGE_AGENT_TARGET',
  labels: 'EDGE_AGENT_LABELS',
  frames: 'EDGE_AGENT_FRAMES',
  'poll-seconds': 'EDGE_AGENT_POLL_SECONDS',
  'report-seconds': 'EDGE_AGENT_REPORT_SECONDS',
  fps: 'EDGE_AGENT_FPS',
  threads: 'EDGE_AGENT_THREADS',
  'min-score': 'EDGE_AGENT_MIN_SCORE',
  'nms-iou': 'EDGE_AGENT_NMS_IOU',
  'retry-seconds': 'EDGE_AGENT_RETRY_SECONDS',
  cache: 'EDGE_AGENT_CACHE_DIR',
  'log-level': 'EDGE_AGENT_LOG_LEVEL',
} as const;

export const USAGE = `usage: npm run edge-agent -- --api URL --name NAME --target TARGET --frames DIR [options]
  (token: environment EDGE_AGENT_TOKEN)
${Object.entries(OPTIONS)
  .map(([o, env]) => `  --${o} (or ${env})`)
  .join('\n')}`;

/** Settings from argv and the environment; a readable error naming every bad field. */
export function loadAgentConfig(argv: string[], env: NodeJS.ProcessEnv): AgentConfig {
  const { values } = parseArgs({
    args: argv,
    options: Object.fromEntries(Object.keys(OPTIONS).map((o) => [o, { type: 'string' as const }])),
    strict: true,
  });
  const pick = (o: keyof typeof OPTIONS) => values[o] ?? env[OPTIONS[o]];
  const name = pick('name');
  const parsed = AgentConfig.safeParse({
    apiUrl: pick('api'),
    token: env.EDGE_AGENT_TOKEN ?? '',
    name,
    target: pick('target'),
    labels: pick('labels'),
    frames: pick('frames'),
    pollSeconds: pick('poll-seconds'),
    reportSeconds: pick('report-seconds'),
    fps: pick('fps'),
    threads: pick('threads'),
    minScore: pick('min-score'),
    nmsIou: pick('nms-iou'),
    retrySeconds: pick('retry-seconds'),
    cacheDir: pick('cache') ?? path.join(os.tmpdir(), `drivelab-edge-agent-${name ?? 'device'}`),
    logLevel: pick('log-level'),
  });
  if (!parsed.success)
    throw new Error(
      `${parsed.error.issues.map((i) => `${i.path.join('.') || 'config'}: ${i.message}`).join('; ')}\n${USAGE}`,
    );
  return parsed.data;
}
