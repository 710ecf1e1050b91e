/** Spawning `canlab-mcp` the way an MCP client does: the SDK's stdio client transport. */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

export const LAUNCHER = join(__dirname, '../../bin/canlab-mcp.js');

export interface LaunchedClient {
  client: Client;
  /** Everything the launcher wrote to stderr so far. */
  stderr: () => string;
  /** Errors the client transport raised (a non-protocol line on stdout would be one). */
  errors: Error[];
  close(): Promise<void>;
}

export async function launchStdio(args: string[] = []): Promise<LaunchedClient> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [LAUNCHER, ...args],
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const errors: Error[] = [];
  const client = new Client({ name: 'canlab-test', version: '1' });
  client.onerror = (err) => errors.push(err);
  await client.connect(transport);
  return { client, stderr: () => stderr, errors, close: () => client.close() };
}

/** Runs the launcher to completion with closed stdin; resolves with its exit code and output. */
export function runLauncher(
  args: string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [LAUNCHER, ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end();
  });
}
