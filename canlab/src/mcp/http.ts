/**
 * The tool server over Streamable HTTP at `/mcp` (the in-window server, and the launcher's --http
 * mode): stateful sessions as the SDK defines them (an initialize request opens a session whose id
 * the client sends back in `mcp-session-id`; DELETE ends it), each session with its own McpServer
 * over the one workspace.
 *
 * Refusals (JSON bodies):
 * - bearer token configured and `Authorization: Bearer <token>` missing or wrong: 401 with
 *   `WWW-Authenticate: Bearer`, body `{"error": "unauthorized", "message": …}`;
 * - a request carrying an `Origin` that is not loopback (a web page in a browser, e.g. after DNS
 *   rebinding): 403 `{"error": "forbidden_origin"}`; MCP clients outside browsers send no Origin;
 * - a path other than /mcp: 404 `{"error": "not_found"}`; a body over 4 MiB: 413; invalid JSON: 400
 *   JSON-RPC parse error; an unknown session id: 404 JSON-RPC error; no session id on a request
 *   other than initialize: 400 JSON-RPC error.
 * Without a bearer token anyone who can reach the port can read the capture and edit the signal
 * list: keep it on loopback, and set a token before publishing it through a tunnel.
 */
import { randomUUID, timingSafeEqual, createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import type { WorkspaceApi } from '../workspace/types';
import type { WorkspaceProvider } from './common';
import { createCanlabMcpServer } from './tools';

export const DEFAULT_MCP_HOST = '127.0.0.1';
export const DEFAULT_MCP_PORT = 8766;
export const MCP_PATH = '/mcp';
const MAX_BODY_BYTES = 4 * 1024 * 1024;

export interface McpHttpOptions {
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** When set, every request needs `Authorization: Bearer <token>`. */
  bearerToken?: string;
}

export interface McpHttpServer {
  /** `http://host:port/mcp` */
  url: string;
  close(): Promise<void>;
}

class HttpRefusal extends Error {
  constructor(
    readonly status: number,
    readonly body: Record<string, unknown>,
  ) {
    super(String(body.message ?? body.error));
  }
}

function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) return;
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

function jsonRpcError(code: number, message: string): Record<string, unknown> {
  return { jsonrpc: '2.0', error: { code, message }, id: null };
}

/** Compares digests, so neither the token's content nor its length leaks through timing. */
function tokenMatches(header: string | undefined, token: string): boolean {
  const m = /^Bearer\s+(.+)$/i.exec(header ?? '');
  if (!m) return false;
  const digest = (s: string): Buffer => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(m[1]!.trim()), digest(token));
}

function isLoopbackOrigin(origin: string): boolean {
  try {
    const host = new URL(origin).hostname;
    return host === 'localhost' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
  } catch {
    return false;
  }
}

async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES)
      throw new HttpRefusal(413, {
        error: 'too_large',
        message: `request bodies are limited to ${MAX_BODY_BYTES} bytes`,
      });
    chunks.push(chunk);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
  } catch {
    throw new HttpRefusal(400, jsonRpcError(-32700, 'Parse error: the body is not JSON'));
  }
}

/** Serves the tools over Streamable HTTP for the provider's workspace. */
export async function startMcpHttpServer(
  workspace: WorkspaceProvider,
  options: McpHttpOptions = {},
): Promise<McpHttpServer> {
  const host = options.host ?? DEFAULT_MCP_HOST;
  const token = options.bearerToken;
  const sessions = new Map<string, StreamableHTTPServerTransport>();

  async function openSession(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, transport);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await createCanlabMcpServer(workspace).connect(transport);
    await transport.handleRequest(req, res, body);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (path !== MCP_PATH)
      throw new HttpRefusal(404, { error: 'not_found', message: `the tool server answers at ${MCP_PATH}` });
    const origin = req.headers.origin;
    if (origin !== undefined && !isLoopbackOrigin(origin))
      throw new HttpRefusal(403, {
        error: 'forbidden_origin',
        message: `requests from web origin ${origin} are refused`,
      });
    if (token !== undefined && !tokenMatches(req.headers.authorization, token))
      throw new HttpRefusal(401, {
        error: 'unauthorized',
        message: 'this tool server needs Authorization: Bearer <token>',
      });
    const sessionId = req.headers['mcp-session-id'];
    const body = req.method === 'POST' ? await readJsonBody(req) : undefined;
    if (typeof sessionId === 'string') {
      const transport = sessions.get(sessionId);
      if (!transport)
        throw new HttpRefusal(404, jsonRpcError(-32001, 'Session not found: initialize a new session'));
      await transport.handleRequest(req, res, body);
      return;
    }
    if (req.method === 'POST' && isInitializeRequest(body)) {
      await openSession(req, res, body);
      return;
    }
    throw new HttpRefusal(
      400,
      jsonRpcError(
        -32000,
        'Bad Request: no mcp-session-id header, and the request is not an initialize request',
      ),
    );
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (err instanceof HttpRefusal)
        sendJson(res, err.status, err.body, err.status === 401 ? { 'www-authenticate': 'Bearer' } : {});
      else
        sendJson(
          res,
          500,
          jsonRpcError(-32603, `Internal error: ${err instanceof Error ? err.message : String(err)}`),
        );
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? DEFAULT_MCP_PORT, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${urlHost}:${address.port}${MCP_PATH}`,
    async close() {
      const open = [...sessions.values()];
      sessions.clear();
      await Promise.all(open.map((t) => t.close()));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The in-window tool server over the window's workspace: 127.0.0.1:8766/mcp unless told otherwise. */
export function startWindowMcpServer(
  workspace: WorkspaceApi,
  options: McpHttpOptions = {},
): Promise<McpHttpServer> {
  return startMcpHttpServer(() => workspace, options);
}
