/**
 * `canlab-mcp`: the headless tool server.
 * - default: stdio, over its own Workspace (captures are loaded on request through load_capture);
 * - `--http [--host H] [--port P] [--token T]`: the same tools over Streamable HTTP;
 * - `--attach <mcp_url> [--token T]`: a stdio server that forwards tools/list and tools/call to a
 *   running window's Streamable HTTP endpoint, so a stdio-only client works on the window's capture.
 * In stdio modes stdout carries protocol only; every message for a human goes to stderr.
 */
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { Workspace } from '../workspace/workspace';
import { DEFAULT_MCP_HOST, DEFAULT_MCP_PORT, startMcpHttpServer } from './http';
import { createCanlabMcpServer, SERVER_INFO, TOOL_NAMES } from './tools';

export interface LauncherIo {
  stderr: (text: string) => void;
}

const USAGE = `usage: canlab-mcp                                   stdio tool server over its own workspace
       canlab-mcp --http [--host H] [--port P] [--token T]   Streamable HTTP at http://H:P/mcp (default ${DEFAULT_MCP_HOST}:${DEFAULT_MCP_PORT})
       canlab-mcp --attach <mcp_url> [--token T]   stdio bridge to a running window's tool server
`;

/** Resolves when stdin ends (the client went away) or the process is told to stop. */
function untilStdinEnds(): Promise<void> {
  return new Promise((resolve) => {
    process.stdin.once('end', resolve);
    process.stdin.once('close', resolve);
  });
}

function untilSignalled(): Promise<void> {
  return new Promise((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
}

async function serveStdio(io: LauncherIo): Promise<number> {
  const workspace = new Workspace();
  const server = createCanlabMcpServer(() => workspace);
  await server.connect(new StdioServerTransport());
  io.stderr(`canlab-mcp: ${TOOL_NAMES.length} tools on stdio; load a capture with load_capture\n`);
  await untilStdinEnds();
  await server.close();
  return 0;
}

async function serveHttp(
  io: LauncherIo,
  host: string,
  port: number,
  token: string | undefined,
): Promise<number> {
  const workspace = new Workspace();
  const served = await startMcpHttpServer(() => workspace, {
    host,
    port,
    ...(token === undefined ? {} : { bearerToken: token }),
  });
  io.stderr(
    `canlab-mcp: ${TOOL_NAMES.length} tools at ${served.url}${token === undefined ? ' (no bearer token: anyone who reaches this port can read the capture and edit signals)' : ' (bearer token required)'}\n`,
  );
  if (!/^(127\.|localhost$|::1$)/.test(host))
    io.stderr(`canlab-mcp: warning: listening on ${host}, not loopback\n`);
  await untilSignalled();
  await served.close();
  return 0;
}

/** Relays a window's tools over stdio: tools/list and tools/call go to an SDK client of the window. */
async function serveBridge(io: LauncherIo, url: URL, token: string | undefined): Promise<number> {
  const client = new Client({ name: 'canlab-mcp-attach', version: SERVER_INFO.version });
  const transport = new StreamableHTTPClientTransport(
    url,
    token === undefined ? {} : { requestInit: { headers: { authorization: `Bearer ${token}` } } },
  );
  try {
    await client.connect(transport);
  } catch (err) {
    io.stderr(
      `canlab-mcp: cannot attach to ${url.href}: ${err instanceof Error ? err.message : String(err)}${token === undefined ? ' (if the window set a bearer token, pass --token)' : ''}\n`,
    );
    return 1;
  }
  const relay = new McpServer(SERVER_INFO, {
    capabilities: { tools: {} },
    ...(client.getInstructions() ? { instructions: client.getInstructions() } : {}),
  });
  relay.server.setRequestHandler(ListToolsRequestSchema, (request) => client.listTools(request.params));
  relay.server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    try {
      return (await client.callTool(request.params)) as CallToolResult;
    } catch (err) {
      return {
        content: [
          {
            type: 'text',
            text: `the window's tool server did not answer: ${err instanceof Error ? err.message : String(err)}`,
          },
        ],
        isError: true,
      };
    }
  });
  await relay.connect(new StdioServerTransport());
  io.stderr(`canlab-mcp: attached to ${url.href}\n`);
  await untilStdinEnds();
  await relay.close();
  await transport.terminateSession().catch(() => undefined);
  await client.close();
  return 0;
}

export async function runMcpLauncher(argv: string[], io: LauncherIo): Promise<number> {
  let values: {
    http?: boolean;
    host?: string;
    port?: string;
    token?: string;
    attach?: string;
    help?: boolean;
  };
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        http: { type: 'boolean' },
        host: { type: 'string' },
        port: { type: 'string' },
        token: { type: 'string' },
        attach: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      allowPositionals: false,
    }));
  } catch (err) {
    io.stderr(`canlab-mcp: ${err instanceof Error ? err.message : String(err)}\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    io.stderr(USAGE);
    return 0;
  }
  const refuse = (message: string): number => {
    io.stderr(`canlab-mcp: ${message}\n${USAGE}`);
    return 2;
  };
  if (values.attach !== undefined) {
    if (values.http || values.host !== undefined || values.port !== undefined)
      return refuse('--attach bridges stdio to a window; it takes no --http, --host or --port');
    let url: URL;
    try {
      url = new URL(values.attach);
    } catch {
      return refuse(
        `--attach needs a URL such as http://127.0.0.1:${DEFAULT_MCP_PORT}/mcp, not "${values.attach}"`,
      );
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      return refuse(`--attach needs an http or https URL, not ${url.protocol}`);
    return serveBridge(io, url, values.token);
  }
  if (values.http) {
    const port = values.port === undefined ? DEFAULT_MCP_PORT : Number(values.port);
    if (!Number.isInteger(port) || port < 0 || port > 65535)
      return refuse(`--port must be 0..65535, not "${values.port}"`);
    return serveHttp(io, values.host ?? DEFAULT_MCP_HOST, port, values.token);
  }
  if (values.host !== undefined || values.port !== undefined || values.token !== undefined)
    return refuse('--host, --port and --token go with --http (or --token with --attach)');
  return serveStdio(io);
}
