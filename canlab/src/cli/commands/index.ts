import type { CliCommand, CliRun } from '../command';

/**
 * `command` with a run() that loads its implementation, the `run` export of the module `load`
 * imports, only when the command runs: loaded up front, the implementations (the MCP SDK, zod and
 * every detector among them) were about three quarters of what `canlab --help` took to start.
 */
function lazy(load: () => Promise<{ run: CliRun }>, command: Omit<CliCommand, 'run'>): CliCommand {
  return { ...command, run: async (args, io) => (await load()).run(args, io) };
}

/**
 * Every `canlab` subcommand, in the order `canlab --help` lists them. Append new commands here, with
 * their implementation in a module of their own that this one imports only through `lazy`.
 */
export const commands: CliCommand[] = [
  lazy(() => import('./convert'), {
    name: 'convert',
    usage: 'convert <in> <out>',
    summary:
      'convert a capture between formats: reads every format canlab knows, chosen by content; writes by extension (.log .asc .blf .csv)',
    options: {},
  }),
  lazy(() => import('./decode'), {
    name: 'decode',
    usage: 'decode <capture> --dbc <file> --out <file>',
    summary: 'decode a capture with a DBC signal database to CSV (one row per frame, name=value cells)',
    options: {
      dbc: { type: 'string' },
      out: { type: 'string' },
    },
  }),
  lazy(() => import('./lint'), {
    name: 'lint',
    usage: 'lint <dbc>',
    summary: 'check a DBC file: every finding with its line, exit 1 when one is an error (see docs/dbc.md)',
    options: {},
  }),
  lazy(() => import('./ids'), {
    name: 'ids',
    usage: 'ids <capture>',
    summary: 'list ids with count, mean rate, jitter, DLCs, moving bytes and per-bit flip counts',
    options: { brief: { type: 'boolean' } },
  }),
  lazy(() => import('./detect'), {
    name: 'detect',
    usage: 'detect <capture> [--json <file>] [--dbc <file>]',
    summary:
      'detect counters, checksums, signal boundaries, flags, value tables and multiplexers; optionally write JSON findings and a draft DBC',
    options: { json: { type: 'string' }, dbc: { type: 'string' }, 'max-frames-per-id': { type: 'string' } },
  }),
  lazy(() => import('./capture'), {
    name: 'capture',
    usage:
      'capture (--adapter <name> | --interface <backend> --channel <ch>) [--out <dir>] [--keys k=label,...] [--http <port>] ...',
    summary:
      'receive-only logger: CSV segments, marks.json and a project file, marks from keys, HTTP and GPIO',
    options: {
      interface: { type: 'string' },
      channel: { type: 'string' },
      bitrate: { type: 'string' },
      adapter: { type: 'string', multiple: true },
      keys: { type: 'string' },
      http: { type: 'string' },
      'http-host': { type: 'string' },
      'token-file': { type: 'string' },
      gpio: { type: 'string' },
      duration: { type: 'string' },
      'max-frames': { type: 'string' },
      'max-seconds': { type: 'string' },
      'no-project': { type: 'boolean' },
      out: { type: 'string' },
    },
  }),
  lazy(() => import('./adapters'), {
    name: 'adapters',
    usage:
      'adapters list | add <name> --backend <b> --channel <ch> [--bitrate N] [--fd] [--serial-baud N] [--socketcand-host H] | remove <name> | test <name>',
    summary:
      'saved adapters (<config_dir>/adapters.json) and the Test action: open, listen 1 s, never transmit',
    options: {
      backend: { type: 'string' },
      channel: { type: 'string' },
      bitrate: { type: 'string' },
      fd: { type: 'boolean' },
      'serial-baud': { type: 'string' },
      'socketcand-host': { type: 'string' },
    },
  }),
  lazy(() => import('./plugins'), {
    name: 'plugins',
    usage: 'plugins list [--dir <dir>] | approve <file> | revoke <file>',
    summary: 'plugin files: list their metadata (read, never run), approve a file by its SHA-256, revoke',
    options: { dir: { type: 'string' } },
  }),
  lazy(() => import('./ai'), {
    name: 'ai',
    usage:
      'ai status | configure --provider <openai|anthropic|gemini|ollama> [--model M] [--key-file F] [--endpoint URL] | analyze <capture> [--samples N]',
    summary:
      'optional AI analysis: sends per-message statistics and a frame sample (never the capture), only when configured and asked',
    options: {
      provider: { type: 'string' },
      model: { type: 'string' },
      'key-file': { type: 'string' },
      endpoint: { type: 'string' },
      samples: { type: 'string' },
      question: { type: 'string' },
      'show-payload': { type: 'boolean' },
    },
  }),
  lazy(() => import('./window'), {
    name: 'window',
    usage:
      'window [capture] [--adapter <name>] [--host 127.0.0.1] [--port 8765] [--mcp-port 8766] [--mcp-token <t>]',
    summary:
      'serve the window (live frames, ids, signal builder, timeline, intelligence, ARM TX), the REST API and the MCP tool server',
    options: {
      adapter: { type: 'string' },
      host: { type: 'string' },
      port: { type: 'string' },
      'mcp-port': { type: 'string' },
      'mcp-token': { type: 'string' },
    },
  }),
];
