/**
 * `socketcan`: a Linux SocketCAN interface through the `socketcan` npm package (node-can, a native
 * addon that npm builds with the machine's compiler; an optional dependency of canlab, pinned to
 * 4.0.7, the last release that supports Node 20), or a remote one through a socketcand daemon
 * (extras.socketcandHost) in its raw mode, which needs neither the package nor CAN in this kernel.
 *
 * Before anything else the interface is read from /sys/class/net/<if>: a link that is missing or
 * down is refused with the exact command that brings it up (exit 2), and with what this kernel
 * lacks when it has no CAN sockets or no vcan module; a link that is not CAN is refused by name.
 */
import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import os from 'node:os';
import type { Duplex } from 'node:stream';
import { lengthToDlc, type CanFrame } from '../../frame';
import type { AdapterConfig, Receiver } from '../types';
import { AdapterUnavailableError, makeReceiver, ReceiverEvents, receiveTime } from '../types';
import { packageInstalled } from './fixes';
import { closeLink, openLink } from './link';

export const DEFAULT_SOCKETCAN_BITRATE = 500000;
export const SOCKETCAND_PORT = 29536;
const IFF_UP = 0x1;
/** The link type (/sys/class/net/<if>/type) of can and vcan interfaces alike. */
const ARPHRD_CAN = 280;
const INTERFACE_NAME = /^[A-Za-z0-9_.-]{1,15}$/;
const SOCKETCAND_ALTERNATIVE =
  'or read the bus through a socketcand daemon on a machine that has it (extras socketcandHost)';

/**
 * What this kernel offers for SocketCAN: CAN sockets (the `can` core, loaded when /proc/net/can
 * exists, or present as a module the first socket loads) and the vcan driver (loaded, or a module).
 */
export function kernelCanSupport(): { sockets: boolean; vcan: boolean } {
  const modules = `/lib/modules/${os.release()}`;
  let builtin = '';
  try {
    builtin = readFileSync(`${modules}/modules.builtin`, 'utf8');
  } catch {
    // no module tree: only what is loaded counts
  }
  const hasModule = (dir: string, name: string): boolean =>
    builtin.includes(`/${name}.ko`) ||
    ['', '.xz', '.zst', '.gz'].some((ext) => existsSync(`${modules}/kernel/${dir}/${name}.ko${ext}`));
  return {
    sockets: existsSync('/proc/net/can') || hasModule('net/can', 'can'),
    vcan: existsSync('/sys/module/vcan') || hasModule('drivers/net/can', 'vcan'),
  };
}

/** The command that brings `iface` up: a vcan interface has no bit rate; a real one needs one. */
export function linkUpCommand(iface: string, bitrate: number | undefined): string {
  if (iface.startsWith('vcan')) return `ip link add dev ${iface} type vcan; ip link set ${iface} up`;
  return `ip link set ${iface} up type can bitrate ${bitrate ?? DEFAULT_SOCKETCAN_BITRATE}`;
}

/** 'up', 'down' or 'missing', from sysfs. */
export async function socketcanLinkState(iface: string): Promise<'up' | 'down' | 'missing'> {
  let operstate: string;
  let flags: number;
  try {
    operstate = (await readFile(`/sys/class/net/${iface}/operstate`, 'utf8')).trim();
    flags = parseInt((await readFile(`/sys/class/net/${iface}/flags`, 'utf8')).trim(), 16);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'missing';
    throw err;
  }
  // vcan reports operstate "unknown" while up; a CAN controller reports "up"
  return (flags & IFF_UP) !== 0 && operstate !== 'down' ? 'up' : 'down';
}

/** Why `iface` cannot come up on this kernel whatever the link command (a sentence), or '' when it can. */
export function kernelShortfall(iface: string): string {
  const kernel = kernelCanSupport();
  const release = os.release();
  if (!kernel.sockets)
    return `This kernel (${release}) has no CAN support (no can module): use one that has, ${SOCKETCAND_ALTERNATIVE}.`;
  if (iface.startsWith('vcan') && !kernel.vcan)
    return `This kernel (${release}) has no vcan module: use one built with CONFIG_CAN_VCAN.`;
  return '';
}

export async function openSocketcanReceiver(adapter: AdapterConfig): Promise<Receiver> {
  const iface = adapter.channel;
  if (!INTERFACE_NAME.test(iface))
    throw new AdapterUnavailableError(
      adapter,
      `'${iface}' is not a network interface name`,
      'name the interface, e.g. --channel can0',
    );
  if (adapter.extras.socketcandHost !== undefined) return openSocketcandReceiver(adapter);
  const state = await socketcanLinkState(iface);
  if (state !== 'up') {
    throw new AdapterUnavailableError(
      adapter,
      state === 'missing' ? `interface ${iface} does not exist (link down)` : `interface ${iface} is down`,
      `bring it up (as root): ${linkUpCommand(iface, adapter.bitrate)}. ${kernelShortfall(iface)}`.trim(),
    );
  }
  const type = Number((await readFile(`/sys/class/net/${iface}/type`, 'utf8')).trim());
  if (type !== ARPHRD_CAN) {
    throw new AdapterUnavailableError(
      adapter,
      `interface ${iface} is not a CAN interface (link type ${type}, CAN is ${ARPHRD_CAN})`,
      `name a CAN interface (ip -brief link show type can; ip -brief link show type vcan), ${SOCKETCAND_ALTERNATIVE}`,
    );
  }
  if (!packageInstalled('socketcan')) {
    throw new AdapterUnavailableError(
      adapter,
      "the 'socketcan' npm package is not installed",
      `npm install socketcan@4.0.7 -w canlab (a native addon: needs python3, make and g++), ${SOCKETCAND_ALTERNATIVE}`,
    );
  }
  return openRawChannel(adapter);
}

interface RawChannelMessage {
  id: number;
  ext?: boolean;
  rtr?: boolean;
  err?: boolean;
  data?: Buffer;
  ts_sec?: number;
  ts_usec?: number;
}
interface RawChannel {
  addListener(event: 'onMessage', listener: (msg: RawChannelMessage) => void): void;
  start(): void;
  stop(): void;
}
interface SocketcanModule {
  createRawChannel(iface: string, timestamps: boolean): RawChannel;
}

async function openRawChannel(adapter: AdapterConfig): Promise<Receiver> {
  // a variable specifier: the package is optional and has no types here
  const moduleName = 'socketcan';
  const socketcan = (await import(moduleName)) as SocketcanModule;
  let channel: RawChannel;
  try {
    channel = socketcan.createRawChannel(adapter.channel, true);
  } catch (err) {
    // node-can says only "Error while creating channel": socket(), the interface lookup or bind() failed
    throw new AdapterUnavailableError(
      adapter,
      `the kernel refused a CAN_RAW socket on ${adapter.channel} (${err instanceof Error ? err.message : String(err)})`,
      `load the CAN modules (as root): modprobe can_raw, ${SOCKETCAND_ALTERNATIVE}`,
    );
  }
  const events = new ReceiverEvents();
  channel.addListener('onMessage', (msg) => {
    // for a remote frame the kernel's length is the DLC asked for, and no bytes follow
    const payload = msg.data ?? Buffer.alloc(0);
    const remote = msg.rtr === true;
    const fd = payload.length > 8;
    events.emitFrame({
      timestamp: msg.ts_sec !== undefined ? msg.ts_sec + (msg.ts_usec ?? 0) / 1e6 : receiveTime(),
      id: msg.id,
      extended: msg.ext === true,
      remote,
      error: msg.err === true,
      fd,
      brs: false,
      esi: false,
      dlc: lengthToDlc(payload.length, fd),
      data: remote ? new Uint8Array(0) : new Uint8Array(payload),
      channel: 0,
    });
  });
  channel.start();
  return makeReceiver(adapter, events, () => {
    channel.stop();
    return Promise.resolve();
  });
}

/** Parses a socketcand raw-mode `< frame <id> <sec.usec> <hexdata> >`; undefined for other messages. */
export function parseSocketcandFrame(message: string): CanFrame | undefined {
  const m = /^< frame ([0-9A-Fa-f]{1,8}) (\d+)\.(\d+) ([0-9A-Fa-f]*) >$/.exec(message);
  if (m === null) return undefined;
  const hex = m[4]!;
  if (hex.length % 2 !== 0 || hex.length > 128) throw new RangeError(`odd data: ${message}`);
  const data = Uint8Array.from(Buffer.from(hex, 'hex'));
  const fd = data.length > 8;
  return {
    timestamp: Number(m[2]) + Number(`0.${m[3]}`),
    id: parseInt(m[1]!, 16),
    // socketcand prints standard ids with 3 digits and extended ones with 8
    extended: m[1]!.length > 3,
    remote: false,
    error: false,
    fd,
    brs: false,
    esi: false,
    dlc: lengthToDlc(data.length, fd),
    data,
    channel: 0,
  };
}

async function openSocketcandReceiver(adapter: AdapterConfig): Promise<Receiver> {
  const host = adapter.extras.socketcandHost!;
  const endpoint = host.includes(':') && !host.startsWith('[') ? host : `${host}:${SOCKETCAND_PORT}`;
  const link: Duplex = await openLink({ ...adapter, channel: endpoint });
  const events = new ReceiverEvents();
  let pending = '';
  let closing = false;
  let rawMode = false;
  link.setEncoding('latin1');
  const send = (text: string): void => void link.write(text);
  link.on('data', (chunk: string) => {
    pending += chunk;
    for (let end = pending.indexOf('>'); end >= 0; end = pending.indexOf('>')) {
      const message = pending.slice(pending.indexOf('<'), end + 1).trim();
      pending = pending.slice(end + 1);
      if (message === '< hi >') send(`< open ${adapter.channel} >`);
      else if (message === '< ok >' && !rawMode) {
        rawMode = true;
        send('< rawmode >');
      } else if (message.startsWith('< error')) events.emitError(new Error(`socketcand ${host}: ${message}`));
      else {
        try {
          const frame = parseSocketcandFrame(message);
          if (frame !== undefined) events.emitFrame(frame);
        } catch {
          events.malformed++;
        }
      }
    }
  });
  link.on('error', (err) => events.emitError(err));
  link.on('close', () => {
    if (!closing) events.emitError(new Error(`socketcand ${host} closed the connection`));
  });
  return makeReceiver(adapter, events, async () => {
    closing = true;
    await closeLink(link);
  });
}
