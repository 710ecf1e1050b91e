/**
 * `canlab capture`: the receive-only logger. Records one or more adapters into CSV segments in a
 * capture folder, with marks from the keyboard, HTTP POST /mark (the REST API without /inject)
 * and GPIO switches. Stops on `q`, Ctrl-C, SIGTERM or --duration, closing open marks, flushing
 * the last segment and printing the summary and the project path. Layout: docs/capture.md.
 */
import path from 'node:path';
import type { AdapterConfig } from '../../adapters/types';
import {
  ADAPTER_UNAVAILABLE_EXIT,
  AdapterUnavailableError,
  isBackendId,
  BACKENDS,
} from '../../adapters/types';
import { findAdapter } from '../../adapters/store';
import { startGpio, parseGpioBindings } from '../../capture/gpio';
import { parseKeyBindings, startKeyboard } from '../../capture/keyboard';
import { DEFAULT_MAX_FRAMES, DEFAULT_MAX_SECONDS } from '../../capture/segments';
import { CaptureSession, type CaptureSummary } from '../../capture/session';
import { loadOrCreateToken } from '../../capture/token';
import { configDir } from '../../config-dir';
import { CanlabInputError } from '../../errors';
import { createRestServer, DEFAULT_REST_HOST } from '../../rest/server';
import type { MarkAction } from '../../workspace/types';
import type { CliIo, CliRun } from '../command';

export const DEFAULT_TOKEN_FILE = 'capture.token';

function positive(
  values: Record<string, string | boolean | undefined>,
  name: string,
  integer: boolean,
): number | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (typeof raw !== 'string' || !Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n))) {
    throw new CanlabInputError(
      'capture',
      `--${name} must be a positive ${integer ? 'integer' : 'number'}, not '${String(raw)}'`,
    );
  }
  return n;
}

function timestampFolder(now = new Date()): string {
  const p = (n: number): string => String(n).padStart(2, '0');
  return `capture-${now.getFullYear()}${p(now.getMonth() + 1)}${p(now.getDate())}-${p(now.getHours())}${p(now.getMinutes())}${p(now.getSeconds())}`;
}

/** The adapters named by --adapter (saved) and --interface/--channel/--bitrate (ad hoc). */
async function adaptersFrom(
  values: Record<string, string | boolean | undefined>,
  saved: readonly string[],
): Promise<AdapterConfig[]> {
  const adapters: AdapterConfig[] = [];
  for (const name of saved) adapters.push(await findAdapter(name));
  const backend = values['interface'];
  if (typeof backend === 'string') {
    if (!isBackendId(backend))
      throw new CanlabInputError(
        'capture',
        `--interface must be one of ${BACKENDS.join(', ')}, not '${backend}'`,
      );
    const adhoc: AdapterConfig = {
      name: `${backend}:${String(values['channel'] ?? '')}`,
      backend,
      channel: String(values['channel'] ?? ''),
      fd: false,
      extras: {},
    };
    const bitrate = positive(values, 'bitrate', true);
    if (bitrate !== undefined) adhoc.bitrate = bitrate;
    adapters.push(adhoc);
  } else if (values['channel'] !== undefined || values['bitrate'] !== undefined) {
    throw new CanlabInputError(
      'capture',
      '--channel and --bitrate describe an --interface; a saved --adapter carries its own',
    );
  }
  if (adapters.length === 0)
    throw new CanlabInputError(
      'capture',
      'name what to record: --adapter <saved name> (repeatable), or --interface <backend> --channel <channel>',
    );
  const names = adapters.map((a) => a.name);
  const twice = names.find((n, i) => names.indexOf(n) !== i);
  if (twice !== undefined) throw new CanlabInputError('capture', `adapter '${twice}' is named twice`);
  return adapters;
}

function printSummary(io: CliIo, reason: string, summary: CaptureSummary, dir: string): void {
  const s = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;
  io.stdout(
    `\r\nstopped (${reason}): ${s(summary.frames, 'frame')} in ${s(summary.segments.length, 'segment')}, ${s(summary.marks.length, 'mark')}\n`,
  );
  if (summary.closedAtStop.length > 0) io.stdout(`closed at stop: ${summary.closedAtStop.join(', ')}\n`);
  if (summary.malformed > 0) io.stdout(`skipped ${s(summary.malformed, 'undecodable message')}\n`);
  io.stdout(
    summary.projectFile !== undefined
      ? `project: ${summary.projectFile}\n`
      : `capture folder: ${dir} (no project file: --no-project)\n`,
  );
}

export const run: CliRun = async ({ positionals, values }, io) => {
  if (positionals.length > 0)
    throw new CanlabInputError('capture', `takes no positional arguments (got '${positionals[0]}')`);
  const saved = (values['adapter'] as unknown as string[] | undefined) ?? [];
  let keys: Map<string, string>;
  let gpioPins: Map<number, string>;
  try {
    keys = parseKeyBindings(values['keys'] as string | undefined);
    gpioPins = parseGpioBindings(values['gpio'] as string | undefined);
  } catch (err) {
    throw new CanlabInputError('capture', (err as Error).message);
  }
  const duration = positive(values, 'duration', false);
  const maxFrames = positive(values, 'max-frames', true) ?? DEFAULT_MAX_FRAMES;
  const maxSeconds = positive(values, 'max-seconds', false) ?? DEFAULT_MAX_SECONDS;
  const httpPort = values['http'] === undefined ? undefined : Number(values['http']);
  if (httpPort !== undefined && !(Number.isInteger(httpPort) && httpPort >= 0 && httpPort < 65536)) {
    throw new CanlabInputError(
      'capture',
      `--http must be a port number (0 picks a free one), not '${String(values['http'])}'`,
    );
  }
  if (httpPort === undefined && (values['http-host'] !== undefined || values['token-file'] !== undefined)) {
    throw new CanlabInputError('capture', '--http-host and --token-file go with --http <port>');
  }
  const adapters = await adaptersFrom(values, saved);
  const dir = path.resolve(typeof values['out'] === 'string' ? values['out'] : timestampFolder());

  let session: CaptureSession;
  try {
    session = await CaptureSession.start({
      dir,
      adapters,
      maxFrames,
      maxSeconds,
      project: values['no-project'] !== true,
    });
  } catch (err) {
    if (err instanceof AdapterUnavailableError) {
      io.stderr(`canlab: ${err.message}; fix: ${err.fix}\n`);
      return ADAPTER_UNAVAILABLE_EXIT;
    }
    throw err;
  }

  // Everything below is torn down by `finish`, whatever stops the run.
  let stopReason: ((reason: string) => void) | undefined;
  const stopped = new Promise<string>((resolve) => (stopReason = resolve));
  const stop = (reason: string): void => stopReason?.(reason);
  const mark = (label: string, action: MarkAction, source: string): void => {
    try {
      const m = session.mark(label, action, source);
      const state =
        m.kind === 'point'
          ? 'point'
          : m.end === undefined
            ? 'begins'
            : `ends (${(m.end - m.start).toFixed(2)} s)`;
      io.stdout(`mark: ${label} ${state} [${source}]\r\n`);
    } catch (err) {
      io.stdout(`mark refused: ${(err as Error).message}\r\n`);
    }
  };
  const teardown: Array<() => void | Promise<void>> = [];
  let exitCode = 0;
  let summary: CaptureSummary | undefined;
  try {
    io.stdout(
      `recording ${adapters.map((a) => `${a.name} (${a.backend} ${a.channel})`).join(', ')} into ${dir}\n`,
    );
    if (httpPort !== undefined) {
      const tokenFile = path.resolve(
        typeof values['token-file'] === 'string'
          ? values['token-file']
          : path.join(configDir(), DEFAULT_TOKEN_FILE),
      );
      const { token, created } = await loadOrCreateToken(tokenFile);
      const host = typeof values['http-host'] === 'string' ? values['http-host'] : DEFAULT_REST_HOST;
      const server = await createRestServer({
        workspace: session.workspace,
        token,
        allowInject: false,
        host,
        port: httpPort,
        warn: (line) => io.stderr(line + '\n'),
      });
      teardown.push(() => server.close());
      io.stdout(
        `http: ${server.url} (POST /mark; header X-API-Token from ${tokenFile}${created ? ', new token' : ''})\n`,
      );
    }
    if (gpioPins.size > 0) {
      const gpio = await startGpio(gpioPins, (label, action) => mark(label, action, 'gpio'));
      if ('unavailable' in gpio)
        io.stdout(
          `gpio: ${gpio.unavailable} (${[...gpioPins].map(([p, l]) => `${p}=${l}`).join(', ')} ignored)\n`,
        );
      else teardown.push(gpio.stop);
    }
    const stdin = process.stdin;
    teardown.push(
      startKeyboard(stdin, keys, {
        mark: (label, action) => mark(label, action, 'keyboard'),
        quit: () => stop('q'),
      }),
    );
    io.stdout(
      stdin.isTTY
        ? `keys: ${[...keys].map(([k, l]) => `${k}=${l}`).join(', ') || 'none'}; q stops\r\n`
        : 'marks: type <label>, <label> on, <label> off or <label> point, one per line; q stops\n',
    );
    const onSigint = (): void => stop('Ctrl-C');
    const onSigterm = (): void => stop('SIGTERM');
    process.on('SIGINT', onSigint);
    process.on('SIGTERM', onSigterm);
    teardown.push(() => {
      process.off('SIGINT', onSigint);
      process.off('SIGTERM', onSigterm);
    });
    if (duration !== undefined) {
      const timer = setTimeout(() => stop(`--duration ${duration} s`), duration * 1000);
      teardown.push(() => clearTimeout(timer));
    }
    void session.fatal.then((err) => {
      io.stderr(`canlab: capture: ${err.message}\n`);
      exitCode = 1;
      stop('error');
    });
    const reason = await stopped;
    for (const t of teardown.splice(0).reverse()) await t();
    summary = await session.stop();
    printSummary(io, reason, summary, dir);
    return exitCode;
  } finally {
    for (const t of teardown.reverse()) await t();
    // a failure while starting the inputs still closes the adapters and flushes what was recorded
    if (summary === undefined) await session.stop().catch(() => undefined);
  }
};
