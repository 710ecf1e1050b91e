/**
 * The `virtual` bus: any number of processes on this host share a named bus. Each listener binds
 * a UDP socket on 127.0.0.1 (an ephemeral port) and announces itself by an empty file
 * `<pid>-<port>` in the bus's directory; a sender delivers every frame to each member listed
 * there. No broker process is needed, and nothing leaves loopback.
 *
 * The directory is `$CANLAB_VIRTUAL_BUS_DIR/<bus>` when that variable is set (tests use a fresh
 * one), else `<os tmpdir>/canlab-virtual-<uid>/<bus>`.
 */
import { mkdir, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { AdapterConfig } from '../types';
import { AdapterUnavailableError } from '../types';

const BUS_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

export function virtualBusDir(config: Pick<AdapterConfig, 'name' | 'backend' | 'channel'>): string {
  if (!BUS_NAME.test(config.channel) || config.channel === '.' || config.channel === '..') {
    throw new AdapterUnavailableError(
      config,
      `virtual bus name '${config.channel}' is not usable`,
      'name the bus with 1-64 letters, digits, _ . or - (e.g. --channel vbus0)',
    );
  }
  const root =
    process.env['CANLAB_VIRTUAL_BUS_DIR'] ?? path.join(os.tmpdir(), `canlab-virtual-${os.userInfo().uid}`);
  return path.join(root, config.channel);
}

export async function ensureBusDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
}

export function memberFileName(port: number): string {
  return `${process.pid}-${port}`;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: alive but another user's; only ESRCH means gone
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** UDP ports of the bus's live members; files left by processes that died are removed. */
export async function busMemberPorts(dir: string): Promise<number[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const ports: number[] = [];
  for (const name of names) {
    const m = /^(\d+)-(\d+)$/.exec(name);
    if (m === null) continue;
    if (processAlive(Number(m[1]))) ports.push(Number(m[2]));
    else await rm(path.join(dir, name), { force: true });
  }
  return ports;
}
