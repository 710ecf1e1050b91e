/**
 * What every tool family shares: how ids are written in arguments and results, how frames read
 * back, how a result or a refusal becomes an MCP tool result, and the registration signature.
 */
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { formatId } from '../analysis/bits';
import { CanlabInputError } from '../errors';
import type { CanFrame } from '../frame';
import type { WorkspaceApi } from '../workspace/types';

/** Every tool resolves its workspace per call, so the same tools serve a window's and a launcher's. */
export type WorkspaceProvider = () => WorkspaceApi;

/** A tool family registers its tools on the server. */
export type ToolFamily = (server: McpServer, workspace: WorkspaceProvider) => void;

/** The source recorded on signal steps and marks a tool makes. */
export const MCP_SOURCE = 'mcp';

/** Frames a listing tool returns at most per call, and by default. */
export const MAX_LIST = 5000;
export const DEFAULT_LIST = 50;

export interface IdRef {
  id: number;
  extended: boolean;
  /** The canonical spelling (`0x123`, `0x18DAF110x`), as results print it. */
  key: string;
}

export const idArg = z
  .string()
  .describe(
    'Arbitration id in hex with 0x prefix: "0x123"; extended ids as "0x18DAF110" (above 0x7FF or 8 digits) or with an x suffix "0x00000123x", as results print them',
  );

/**
 * Parses an id argument. Extended when it has the `x` suffix, is written with 8 hex digits, or
 * exceeds the 11-bit range.
 */
export function parseId(text: string): IdRef {
  const m = /^0x([0-9a-f]{1,8})(x?)$/i.exec(text.trim());
  if (!m)
    throw new CanlabInputError(
      'id',
      `"${text}" is not an id; write it in hex with a 0x prefix, e.g. 0x123 or 0x18DAF110`,
    );
  const id = parseInt(m[1]!, 16);
  const extended = m[2] !== '' || m[1]!.length === 8 || id > 0x7ff;
  if (id > 0x1fffffff) throw new CanlabInputError('id', `${text} is beyond the 29-bit extended range`);
  return { id, extended, key: formatId(id, extended) };
}

/** Frames whose id is the given one. */
export function isId(frame: CanFrame, ref: IdRef): boolean {
  return frame.id === ref.id && frame.extended === ref.extended;
}

export function hexBytes(data: ArrayLike<number>): string {
  return Array.from(data, (b) => b.toString(16).toUpperCase().padStart(2, '0')).join(' ');
}

/** A frame as tools return it: the REST shape (hex id, hex byte pairs) plus time, channel and flags. */
export function frameView(f: CanFrame): Record<string, unknown> {
  return {
    timestamp: f.timestamp,
    id: formatId(f.id, f.extended),
    data: hexBytes(f.data),
    dlc: f.dlc,
    channel: f.channel,
    ...(f.fd ? { fd: true } : {}),
    ...(f.remote ? { remote: true } : {}),
    ...(f.error ? { error: true } : {}),
  };
}

/** Every frame the workspace holds (of one id when given), oldest first. */
export function allFrames(ws: WorkspaceApi, ref?: IdRef): readonly CanFrame[] {
  const frames = ws.allFrames();
  return ref ? frames.filter((f) => isId(f, ref)) : frames;
}

/** Throws unless the workspace holds frames: analysis tools need a capture first. */
export function requireFrames(ws: WorkspaceApi): void {
  if (ws.status().frameCount === 0)
    throw new CanlabInputError(
      'workspace',
      'no frames yet: load a capture with load_capture (or record one in the window) first',
    );
}

/** A successful result: the object as JSON text and as structured content. */
export function ok(result: Record<string, unknown>): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(result, null, 1) }], structuredContent: result };
}

/** A refusal or bad input as a tool error: one line, located like the CLI's `<where>: <message>`. */
export function toolError(err: unknown): CallToolResult {
  const text =
    err instanceof CanlabInputError
      ? `${err.where}: ${err.message}`
      : err instanceof Error
        ? err.message
        : String(err);
  return { content: [{ type: 'text', text }], isError: true };
}

/** Runs a handler, turning any throw into a tool error (the SDK would too, but without the location). */
export async function guarded(
  run: () => Record<string, unknown> | Promise<Record<string, unknown>>,
): Promise<CallToolResult> {
  try {
    return ok(await run());
  } catch (err) {
    return toolError(err);
  }
}
