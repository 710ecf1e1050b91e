/**
 * canlab's MCP tool server: 29 tools over a workspace. The tools take the workspace from a provider
 * on every call, so the same server code serves the window's workspace (in-window Streamable HTTP)
 * and the headless launcher's own. No tool transmits: none reaches inject, ARM TX or a transmitter.
 * Tool names and arguments: docs/mcp.md.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { WorkspaceProvider } from './common';
import { captureTools } from './tools/capture';
import { connectorTools } from './tools/connector';
import { detectTools } from './tools/detect';
import { memoryTools } from './tools/memory';
import { patternTools } from './tools/patterns';
import { signalTools } from './tools/signals';
import { timelineTools } from './tools/timeline';

export type { WorkspaceProvider } from './common';

/** The tool names, in the order tools/list returns them. */
export const TOOL_NAMES = [
  'load_capture',
  'status',
  'list_ids',
  'byte_stats',
  'raw_frames',
  'detect_counters',
  'detect_checksums',
  'detect_fields',
  'detect_flags',
  'detect_value_tables',
  'detect_multiplexers',
  'detect_all',
  'draft_dbc',
  'list_signals',
  'define_signal',
  'remove_signal',
  'undo',
  'decode_frames',
  'mark',
  'list_marks',
  'rank_bytes',
  'watch_events',
  'list_isotp_messages',
  'find_repeated_blocks',
  'calibrate_reference',
  'read_memory',
  'write_memory',
  'search',
  'fetch',
] as const;

export const SERVER_INFO = { name: 'canlab', version: '0.1.0' };

const FAMILIES = [
  captureTools,
  detectTools,
  signalTools,
  timelineTools,
  patternTools,
  memoryTools,
  connectorTools,
];

/** A new MCP server with every canlab tool registered (one per session: the SDK binds a server to one transport). */
export function createCanlabMcpServer(workspace: WorkspaceProvider): McpServer {
  const server = new McpServer(SERVER_INFO, {
    capabilities: { tools: {} },
    instructions:
      "canlab reverse-engineers CAN captures. Load one with load_capture (or use the window's), look at list_ids and detect_all, mark intervals on the timeline and rank_bytes against them, then define_signal; undo takes back your own last step. No tool transmits.",
  });
  for (const register of FAMILIES) register(server, workspace);
  return server;
}
