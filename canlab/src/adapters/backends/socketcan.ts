/**
 * `socketcan`: a Linux SocketCAN interface through the optional `socketcan` npm package, or a
 * remote one through a socketcand daemon (extras.socketcandHost) in its raw mode.
 *
 * Before anything else the interface's state is read from /sys/class/net/<if>: a link that is
 * missing or down is refused with the exact command that brings it up (exit 2).
 */
import { readFile } from 'node:fs/promises';
import type { Duplex } from 'node:stream';
import { lengthToDlc, type CanFrame } from '../../frame';
import type { AdapterConfig, Receiver } from '../types';
import { AdapterUnavailableError, makeReceiver, ReceiverEvents, receiveTime } from '../types';
import { packageInstalled } from './fixes';
import { closeLink, openLink } from './link';

export const DEFAULT_SOCKETCAN_BITRATE = 500000;
export const SOCKETCAND_PORT = 29536;
const IFF_UP = 0x1;
const INTERFACE_NAME = /^[A-Za-z0-9_.-]{1,15}$/;

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
      `bring it up (as root): ${linkUpCommand(iface, adapter.bitrate)}`,
    );
  }
  if (!packageInstalled('socketcan')) {
    throw new AdapterUnavailableError(
      adapter,
      "the 'socketcan' npm package is not installed",
      'npm install socketcan -w canlab (a native addon: needs python3, make and g++), or read the interface through socketcand (extras socketcandHost)',
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
  const channel = socketcan.createRawChannel(adapter.channel, true);
  const events = new ReceiverEvents();
  channel.addListener('onMessage', (msg) => {
    const data = msg.rtr || msg.data === undefined ? new Uint8Array(0) : new Uint8Array(msg.data);
    const fd = data.length > 8;
    events.emitFrame({
      timestamp: msg.ts_sec !== undefined ? msg.ts_sec + (msg.ts_usec ?? 0) / 1e6 : receiveTime(),
      id: msg.id,
      extended: msg.ext === true,
      remote: msg.rtr === true,
      error: msg.err === true,
      fd,
      brs: false,
      esi: false,
      dlc: lengthToDlc(data.length, fd),
      data,
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
