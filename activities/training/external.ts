import { spawn } from 'node:child_process';
import { once } from 'node:events';
import readline from 'node:readline';
import { Readable } from 'node:stream';
import type { ReadableStream } from 'node:stream/web';
import { z } from 'zod';
import { COCO_CLASSES } from '../../core/detect/coco-ontology';
import type { TrainingConfig } from '../../core/training-jobs/config';

/**
 * The external-trainer contract (docs/training.md, "External trainers"): a trainer outside this
 * process — a command or an HTTP endpoint, e.g. PyTorch on a GPU host — gets the job as one JSON
 * document and answers one JSON line per epoch and a final line naming the trained file.
 */

export const EXTERNAL_CONTRACT = 'drivelab.training/1';

export interface ExternalTrainingJob {
  contract: typeof EXTERNAL_CONTRACT;
  job_id: string;
  task: string;
  dataset: {
    commit_id: string;
    /** Command: a local folder laid out as the commit (annotations/instances_<split>.json, images/<split>/…). */
    dir: string | null;
    /** Endpoint: each file of that layout as a presigned GET URL. */
    files: Array<{ path: string; url: string }> | null;
    /** Category name → the parent's class index; boxes of other categories are not trained. */
    class_map: Record<string, number>;
  };
  parent: {
    model_version: string;
    format: string;
    /** The parent's output classes, by index. */
    classes: readonly string[];
    path: string | null;
    url: string | null;
  };
  config: TrainingConfig;
  /** The last checkpoint an earlier attempt reported, when this attempt resumes. */
  resume_from: { epoch: number; checkpoint: unknown } | null;
  /** Where the trained ONNX file goes: a local path (command) or a presigned PUT URL (endpoint). */
  output: { path: string | null; url: string | null };
}

export const EpochLine = z.object({
  epoch: z.int().min(1),
  epochs: z.int().min(1),
  train_loss: z.number(),
  val_loss: z.number().nullable().default(null),
  metrics: z
    .object({
      map50: z.number().nullable().default(null),
      ap50_by_class: z.record(z.string(), z.number()).default({}),
    })
    .default({ map50: null, ap50_by_class: {} }),
  /** Any JSON the trainer needs to resume after this epoch; handed back as `resume_from.checkpoint`. */
  checkpoint: z.unknown().optional(),
});
export type EpochLine = z.infer<typeof EpochLine>;

export const FinalLine = z.object({
  /** The trained file: its path (command), or `url` once it is PUT to output.url (endpoint). */
  output: z.string().min(1),
  metrics: z.record(z.string(), z.unknown()).default({}),
});
export type FinalLine = z.infer<typeof FinalLine>;

export class ExternalTrainerError extends Error {
  override name = 'ExternalTrainerError';
}

/** The parent's output classes, as the job document names them. */
export const PARENT_CLASSES = COCO_CLASSES;

const LOG_TAIL = 20;

/**
 * Reads the trainer's lines: epoch lines go to `onEpoch` in order (the next line waits), lines that
 * are not JSON objects are its log (the last few are kept for a failure's message), and the final
 * line ends it. A JSON line that is neither is a broken contract, named.
 */
async function readLines(
  lines: AsyncIterable<string>,
  onEpoch: (line: EpochLine) => Promise<void>,
  log: string[],
): Promise<FinalLine | null> {
  for await (const raw of lines) {
    const line = raw.trim();
    if (!line.startsWith('{')) {
      if (line) log.push(line);
      if (log.length > LOG_TAIL) log.shift();
      continue;
    }
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw new ExternalTrainerError(
        `the external trainer printed a line that is not JSON: ${line.slice(0, 200)}`,
      );
    }
    if (value && typeof value === 'object' && 'output' in value) {
      const final = FinalLine.safeParse(value);
      if (!final.success)
        throw new ExternalTrainerError(
          `the external trainer's final line is malformed: ${final.error.issues[0]?.message}`,
        );
      return final.data;
    }
    const epoch = EpochLine.safeParse(value);
    if (!epoch.success)
      throw new ExternalTrainerError(
        `the external trainer printed a line that is neither an epoch nor the final line (${epoch.error.issues[0]?.path.join('.')}: ${epoch.error.issues[0]?.message}): ${line.slice(0, 200)}`,
      );
    await onEpoch(epoch.data);
  }
  return null;
}

const noFinalLine = (log: string[]) =>
  new ExternalTrainerError(
    `the external trainer ended without its final line naming the trained file${log.length ? `; its last output: ${log.join(' | ')}` : ''}`,
  );

/**
 * Runs the configured command (through the shell) with the job on stdin. Cancelling `signal`
 * sends SIGTERM. A non-zero exit fails with the tail of its stderr.
 */
export async function runExternalCommand(
  command: string,
  job: ExternalTrainingJob,
  opts: { onEpoch: (line: EpochLine) => Promise<void>; signal: AbortSignal; cwd: string },
): Promise<FinalLine> {
  const child = spawn(command, { shell: true, cwd: opts.cwd, stdio: ['pipe', 'pipe', 'pipe'] });
  const stop = () => child.kill('SIGTERM');
  opts.signal.addEventListener('abort', stop, { once: true });
  const stderr: string[] = [];
  readline.createInterface({ input: child.stderr }).on('line', (l) => {
    stderr.push(l);
    if (stderr.length > LOG_TAIL) stderr.shift();
  });
  const exited = once(child, 'close') as Promise<[number | null, NodeJS.Signals | null]>;
  child.stdin.on('error', () => undefined); // a trainer that exits without reading its stdin fails below, by its exit
  child.stdin.end(JSON.stringify(job));
  const log: string[] = [];
  try {
    const final = await readLines(readline.createInterface({ input: child.stdout }), opts.onEpoch, log);
    const [code, signal] = await exited;
    if (code !== 0)
      throw new ExternalTrainerError(
        `the external trainer (${command}) exited with ${signal ?? `code ${code}`}${stderr.length ? `: ${stderr.join(' | ')}` : ''}`,
      );
    if (!final) throw noFinalLine([...log, ...stderr]);
    return final;
  } finally {
    opts.signal.removeEventListener('abort', stop);
    if (child.exitCode === null && child.signalCode === null) stop();
  }
}

/**
 * POSTs the job to the configured endpoint; the response body carries the same lines as a
 * command's stdout (`application/x-ndjson`). Cancelling `signal` aborts the request.
 */
export async function runExternalEndpoint(
  endpoint: string,
  job: ExternalTrainingJob,
  opts: { onEpoch: (line: EpochLine) => Promise<void>; signal: AbortSignal },
): Promise<FinalLine> {
  const res = await fetch(endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/x-ndjson' },
    body: JSON.stringify(job),
    signal: opts.signal,
  }).catch((err: unknown) => {
    if (opts.signal.aborted) throw err;
    throw new ExternalTrainerError(
      `the external trainer endpoint ${endpoint} does not answer: ${(err as Error).message}`,
    );
  });
  if (!res.ok || !res.body)
    throw new ExternalTrainerError(
      `the external trainer endpoint ${endpoint} answered ${res.status}: ${(await res.text().catch(() => '')).slice(0, 500)}`,
    );
  const lines = readline.createInterface({
    input: Readable.fromWeb(res.body as ReadableStream),
  });
  const log: string[] = [];
  const final = await readLines(lines, opts.onEpoch, log);
  if (!final) throw noFinalLine(log);
  return final;
}
