/**
 * The edge targets the forge knows (docs/edgeforge.md): what runs each one, which precisions it
 * takes, its default budgets, and what this installation must have to compile for it and to
 * measure it. Availability is decided from facts about the host, never assumed: a target whose
 * toolchain is absent is refused by name.
 */

export const PRECISIONS = ['fp32', 'fp16', 'int8'] as const;
export type Precision = (typeof PRECISIONS)[number];

export const LATENCY_STATS = ['p50', 'p90', 'p99', 'mean'] as const;
export type LatencyStat = (typeof LATENCY_STATS)[number];

/** The budgets the gate checks (POST /api/edgeforge/gate). */
export interface Budgets {
  /** Most milliseconds `latency_stat` of the measured benchmark may be. */
  latency_ms: number;
  latency_stat: LatencyStat;
  /** Most memory the model takes in the measuring process (MB). */
  memory_mb: number;
  /** Largest compiled file (MB). */
  size_mb: number;
  /** Largest mAP@0.5 the artifact may lose against its source model on the gold set. */
  accuracy_loss: number;
}

export interface EdgeTarget {
  id: string;
  label: string;
  runtime: 'onnxruntime' | 'tensorrt' | 'coreml';
  /** The onnxruntime execution provider that runs the artifact (for onnxruntime targets). */
  execution_provider: string;
  /** The CPU architecture the device has, when the target names one. */
  arch: 'x64' | 'arm64' | null;
  precisions: readonly Precision[];
  budgets: Budgets;
  /** What compiling needs on this installation: an onnxruntime provider, a tool on PATH, an OS. */
  needs: { provider?: string; tool?: string; platform?: string };
}

const cpuBudgets = (latency: number, memory: number): Budgets => ({
  latency_ms: latency,
  latency_stat: 'p90',
  memory_mb: memory,
  size_mb: 32,
  accuracy_loss: 0.02,
});

export const TARGETS: readonly EdgeTarget[] = [
  {
    id: 'cpu-x86_64',
    label: 'x86-64 CPU, onnxruntime CPU execution provider',
    runtime: 'onnxruntime',
    execution_provider: 'cpu',
    arch: 'x64',
    precisions: PRECISIONS,
    budgets: cpuBudgets(100, 512),
    needs: {},
  },
  {
    id: 'cpu-arm64',
    label: 'ARM64 CPU (e.g. a Raspberry Pi 5 or an i.MX 8), onnxruntime CPU execution provider',
    runtime: 'onnxruntime',
    execution_provider: 'cpu',
    arch: 'arm64',
    precisions: PRECISIONS,
    budgets: cpuBudgets(250, 256),
    needs: {},
  },
  {
    id: 'cuda',
    label: 'NVIDIA GPU, onnxruntime CUDA execution provider',
    runtime: 'onnxruntime',
    execution_provider: 'cuda',
    arch: null,
    precisions: ['fp32', 'fp16'],
    budgets: { ...cpuBudgets(20, 2048), size_mb: 64 },
    needs: { provider: 'cuda' },
  },
  {
    id: 'jetson-tensorrt',
    label: 'NVIDIA Jetson, TensorRT engine',
    runtime: 'tensorrt',
    execution_provider: 'tensorrt',
    arch: 'arm64',
    precisions: ['fp32', 'fp16', 'int8'],
    budgets: cpuBudgets(33, 1024),
    needs: { tool: 'trtexec' },
  },
  {
    id: 'coreml',
    label: 'Apple Neural Engine / GPU, Core ML',
    runtime: 'coreml',
    execution_provider: 'coreml',
    arch: 'arm64',
    precisions: ['fp32', 'fp16'],
    budgets: cpuBudgets(33, 512),
    needs: { platform: 'darwin', tool: 'xcrun' },
  },
];

/** Facts about this installation, gathered by the caller. */
export interface HostFacts {
  /** Node's `process.arch`: x64, arm64 ... */
  arch: string;
  /** Node's `process.platform`: linux, darwin ... */
  platform: string;
  /** onnxruntime execution providers bundled with this install. */
  providers: readonly string[];
  /** Of the tools targets need, those found on PATH. */
  tools: readonly string[];
}

export interface Availability {
  available: boolean;
  /** Why not, naming what is missing and how to get it; null when available. */
  reason: string | null;
}

const yes: Availability = { available: true, reason: null };
const no = (reason: string): Availability => ({ available: false, reason });

/** Tools the targets need, for the caller to look up on PATH. */
export const TARGET_TOOLS = [...new Set(TARGETS.flatMap((t) => (t.needs.tool ? [t.needs.tool] : [])))];

export function findTarget(id: string): EdgeTarget | undefined {
  return TARGETS.find((t) => t.id === id);
}

/** Whether this installation can compile for the target. */
export function compileAvailability(target: EdgeTarget, host: HostFacts): Availability {
  const { provider, tool, platform } = target.needs;
  if (platform && host.platform !== platform)
    return no(
      `${target.label} needs a ${platform} host with ${tool ?? 'its toolchain'}; this host is ${host.platform}`,
    );
  if (tool && !host.tools.includes(tool))
    return no(
      `${target.label} needs ${tool} on PATH, which this installation does not have (install ${target.runtime === 'tensorrt' ? 'TensorRT, e.g. from JetPack on the device,' : 'the toolchain'} and put ${tool} on PATH)`,
    );
  if (provider && !host.providers.includes(provider))
    return no(
      `${target.label} needs onnxruntime's ${provider} execution provider, which this onnxruntime-node install does not have (providers: ${host.providers.join(', ') || 'none'}); install onnxruntime-node's ${provider} binaries on a host with the device`,
    );
  // Even with its toolchain present, an engine this forge cannot build and check is not offered.
  if (target.runtime !== 'onnxruntime')
    return no(
      `this forge builds and checks onnxruntime artifacts only; a ${target.runtime} engine for ${target.label} is built from an onnxruntime artifact with ${tool} on the device`,
    );
  return yes;
}

/** Whether an artifact for the target can be timed on this host: it compiles here and runs on this CPU or device. */
export function measureAvailability(target: EdgeTarget, host: HostFacts): Availability {
  const compile = compileAvailability(target, host);
  if (!compile.available) return compile;
  if (target.arch && target.execution_provider === 'cpu' && target.arch !== host.arch)
    return no(
      `${target.id} artifacts run on ${target.arch} CPUs; this host is ${host.arch}, so a latency measured here would not be the target's (report the device's own figures with POST /api/edgeforge/benchmark)`,
    );
  return yes;
}
