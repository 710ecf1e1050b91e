/**
 * `canlab window [capture] [--adapter <name>]`: the analyst's window. Starts the REST API with the
 * window page (127.0.0.1:8765) and the in-window MCP tool server (127.0.0.1:8766/mcp) over one
 * Workspace, prints the per-session token and both URLs, and runs until Ctrl-C or SIGTERM.
 * ARM TX is off at every start. Routes and security: docs/window-and-rest.md.
 */
import { randomBytes } from 'node:crypto';
import { findAdapter } from '../../adapters/store';
import { openReceiver } from '../../adapters/receive';
import { openTransmitter, TRANSMIT_BACKENDS, type AdapterTransmitter } from '../../adapters/transmit';
import { ADAPTER_UNAVAILABLE_EXIT, AdapterUnavailableError, type Receiver } from '../../adapters/types';
import { CanlabInputError } from '../../errors';
import type { CanFrame } from '../../frame';
import { DEFAULT_MCP_PORT, startWindowMcpServer } from '../../mcp/http';
import { createRestServer, DEFAULT_REST_HOST, DEFAULT_REST_PORT } from '../../rest/server';
import { loadPlugins } from '../../plugins/plugins';
import type { WorkspaceApi } from '../../workspace/types';
import { Workspace } from '../../workspace/workspace';
import type { CliRun } from '../command';

/** The main window object a plugin's register(app) receives. */
export interface WindowApp {
  workspace: WorkspaceApi;
  restUrl: string;
  mcpUrl: string;
  /** Prints a line on the window's console, prefixed with `plugin:`. */
  log(line: string): void;
}

/** Live frames are handed to the workspace in batches this often, not one by one. */
const LIVE_FLUSH_MS = 50;

function port(values: Record<string, string | boolean | undefined>, name: string, fallback: number): number {
  const raw = values[name];
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (typeof raw !== 'string' || !/^\d+$/.test(raw) || n > 65535)
    throw new CanlabInputError(
      'window',
      `--${name} must be a port number 0..65535 (0 picks a free one), not '${String(raw)}'`,
    );
  return n;
}

/** Turns a failed listen into one line naming the option to change. */
async function listening<T>(what: string, option: string, start: () => Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL')
      throw new CanlabInputError(
        'window',
        `cannot listen for the ${what}: ${(err as Error).message}; choose another with ${option}`,
      );
    throw err;
  }
}

export const run: CliRun = async ({ positionals, values }, io) => {
  if (positionals.length > 1)
    throw new CanlabInputError('window', `expects at most one capture, got ${positionals.length} arguments`);
  const capture = positionals[0];
  const adapterName = values.adapter as string | undefined;
  if (capture !== undefined && adapterName !== undefined)
    throw new CanlabInputError('window', 'open either a capture file or a live --adapter, not both');
  const host = (values.host as string | undefined) ?? DEFAULT_REST_HOST;
  const restPort = port(values, 'port', DEFAULT_REST_PORT);
  const mcpPort = port(values, 'mcp-port', DEFAULT_MCP_PORT);
  const mcpToken = values['mcp-token'] as string | undefined;
  if (mcpToken !== undefined && mcpToken.trim() === '')
    throw new CanlabInputError('window', '--mcp-token must not be empty');

  const workspace = new Workspace();
  if (capture !== undefined) await workspace.loadCapture(capture);

  const teardown: Array<() => Promise<void> | void> = [];
  const stopAll = async (): Promise<void> => {
    for (const t of teardown.splice(0).reverse()) await t();
  };
  let stopReason: (reason: string) => void = () => undefined;
  const stopped = new Promise<string>((resolve) => (stopReason = resolve));
  try {
    let receiver: Receiver | undefined;
    let transmitter: AdapterTransmitter | undefined;
    if (adapterName !== undefined) {
      const adapter = await findAdapter(adapterName);
      try {
        receiver = await openReceiver(adapter);
        teardown.push(() => receiver?.close());
        if ((TRANSMIT_BACKENDS as readonly string[]).includes(adapter.backend)) {
          transmitter = await openTransmitter(adapter);
          teardown.push(() => transmitter?.close());
        }
      } catch (err) {
        if (!(err instanceof AdapterUnavailableError)) throw err;
        io.stderr(`canlab: ${err.message}; fix: ${err.fix}\n`);
        await stopAll();
        return ADAPTER_UNAVAILABLE_EXIT;
      }
      workspace.startRecording(`${adapter.name} (${adapter.backend} ${adapter.channel})`);
      workspace.attachTransmitter(transmitter);
      let pending: CanFrame[] = [];
      const offFrame = receiver.onFrame((f) => pending.push(f));
      const flush = setInterval(() => {
        if (pending.length === 0) return;
        const batch = pending;
        pending = [];
        workspace.appendFrames(batch);
      }, LIVE_FLUSH_MS);
      const offError = receiver.onError((err) => {
        io.stderr(`canlab: adapter '${adapter.name}': ${err.message}\n`);
        stopReason('adapter error');
      });
      teardown.push(() => {
        offFrame();
        offError();
        clearInterval(flush);
        workspace.stopRecording();
      });
    }

    const token = randomBytes(24).toString('base64url');
    const rest = await listening('REST API', '--port', () =>
      createRestServer({
        workspace,
        token,
        allowInject: true,
        host,
        port: restPort,
        warn: (line) => io.stderr(`${line}\n`),
      }),
    );
    teardown.push(() => rest.close());
    const mcp = await listening('MCP tool server', '--mcp-port', () =>
      startWindowMcpServer(workspace, {
        host,
        port: mcpPort,
        ...(mcpToken === undefined ? {} : { bearerToken: mcpToken }),
      }),
    );
    teardown.push(() => mcp.close());

    // Plugins get the window's app object; only approved ones run (trust on first use, by SHA-256).
    const app: WindowApp = {
      workspace,
      restUrl: rest.url,
      mcpUrl: mcp.url,
      log: (line) => io.stdout(`plugin: ${line}\n`),
    };
    const plugins = await loadPlugins(app);
    const ran = plugins.filter((p) => p.info.state === 'approved' && !p.error);
    const waiting = plugins.filter((p) => p.info.state !== 'approved');
    for (const failed of plugins.filter((p) => p.error))
      io.stderr(`plugin ${failed.info.name} failed in register(app): ${failed.error}\n`);

    const what =
      capture ?? (receiver ? `live: ${workspace.status().source}` : 'no capture (load one in the window)');
    const tx = transmitter
      ? 'this adapter can transmit once ARM TX is on'
      : 'no transmitter attached: inject is refused';
    io.stdout(
      [
        `canlab window: ${what}`,
        `  token:  ${token}`,
        `  window: ${rest.url}/#token=${token}`,
        `  REST:   ${rest.url} (header X-API-Token: <token>)`,
        `  MCP:    ${mcp.url} (${mcpToken === undefined ? 'no bearer token' : 'bearer token from --mcp-token'})`,
        `  ARM TX: off (${tx})`,
        `  plugins: ${ran.map((p) => `${p.info.name} ${p.info.version}`).join(', ') || 'none running'}${waiting.length ? `; ${waiting.length} awaiting approval (canlab plugins list)` : ''}`,
        'Ctrl-C or SIGTERM stops.',
        '',
      ].join('\n'),
    );

    const onSigint = (): void => stopReason('Ctrl-C');
    const onSigterm = (): void => stopReason('SIGTERM');
    process.on('SIGINT', onSigint);
    process.on('SIGTERM', onSigterm);
    teardown.push(() => {
      process.off('SIGINT', onSigint);
      process.off('SIGTERM', onSigterm);
    });
    const reason = await stopped;
    await stopAll();
    io.stdout(`stopped (${reason})\n`);
    return reason === 'adapter error' ? 1 : 0;
  } finally {
    await stopAll();
  }
};
