/**
 * `slcan`: Lawicel / SLCAN ASCII adapters (CANable, CANUSB, USBtin) on a serial port or a TCP
 * `host:port` (ser2net and similar bridges). On open canlab sends `C` (close, in case the channel
 * was left open), `S<n>` (nominal bit rate) and `L` (open in listen-only mode: the controller
 * neither acknowledges nor sends); on close it sends `C`. It never sends a frame command
 * (t T r R d D b B).
 *
 * Received lines, each ended by CR (a BEL instead answers a refused command):
 * `tiiildd…` standard, `Tiiiiiiiildd…` extended, `riiil` / `Riiiiiiiil` remote, and the CAN FD
 * extension `d`/`D` (no bit-rate switch) and `b`/`B` (with BRS) whose length digit is the FD DLC
 * 0–F; an optional 4-hex-digit timestamp may follow (ignored: frames carry the host's time).
 */
import type { Duplex } from 'node:stream';
import { dlcToLength, type CanFrame } from '../../frame';
import type { AdapterConfig, Receiver } from '../types';
import { AdapterUnavailableError, makeReceiver, ReceiverEvents, receiveTime } from '../types';
import { closeLink, openLink } from './link';

/** Lawicel `S<n>` codes by bit rate. */
export const SLCAN_BITRATES: ReadonlyMap<number, number> = new Map([
  [10000, 0],
  [20000, 1],
  [50000, 2],
  [100000, 3],
  [125000, 4],
  [250000, 5],
  [500000, 6],
  [800000, 7],
  [1000000, 8],
]);
export const SLCAN_DEFAULT_BITRATE = 500000;

const HEX = /^[0-9A-Fa-f]*$/;
const BEL = '\u0007';

/** Parses one SLCAN line (without its CR); undefined when it is not a received frame. Throws RangeError on a malformed frame line. */
export function parseSlcanLine(line: string): Omit<CanFrame, 'timestamp' | 'channel'> | undefined {
  const kind = line[0];
  if (kind === undefined || !'tTrRdDbB'.includes(kind)) return undefined;
  if (!HEX.test(line.slice(1))) throw new RangeError(`not hex: ${line}`);
  const extended = kind === 'T' || kind === 'R' || kind === 'D' || kind === 'B';
  const remote = kind === 'r' || kind === 'R';
  const fd = 'dDbB'.includes(kind);
  const idLength = extended ? 8 : 3;
  if (line.length < 1 + idLength + 1) throw new RangeError(`too short: ${line}`);
  const id = parseInt(line.slice(1, 1 + idLength), 16);
  if (id > (extended ? 0x1fffffff : 0x7ff)) throw new RangeError(`id out of range: ${line}`);
  const dlc = parseInt(line[1 + idLength]!, 16);
  if (!fd && dlc > 8) throw new RangeError(`classic DLC above 8: ${line}`);
  const length = remote ? 0 : dlcToLength(dlc, fd);
  const dataStart = 2 + idLength;
  const rest = line.length - dataStart - length * 2;
  // what follows the data is nothing, or a 4-digit timestamp
  if (rest !== 0 && rest !== 4) throw new RangeError(`data does not match DLC ${dlc}: ${line}`);
  const data = new Uint8Array(length);
  for (let i = 0; i < length; i++)
    data[i] = parseInt(line.slice(dataStart + i * 2, dataStart + i * 2 + 2), 16);
  return { id, extended, remote, error: false, fd, brs: kind === 'b' || kind === 'B', esi: false, dlc, data };
}

export function slcanOpenCommands(adapter: AdapterConfig): string {
  const bitrate = adapter.bitrate ?? SLCAN_DEFAULT_BITRATE;
  const code = SLCAN_BITRATES.get(bitrate);
  if (code === undefined) {
    throw new AdapterUnavailableError(
      adapter,
      `SLCAN has no code for ${bitrate} bit/s`,
      `choose one of ${[...SLCAN_BITRATES.keys()].join(', ')} bit/s (--bitrate)`,
    );
  }
  return `C\rS${code}\rL\r`;
}

export async function openSlcanReceiver(adapter: AdapterConfig): Promise<Receiver> {
  const openCommands = slcanOpenCommands(adapter);
  const link: Duplex = await openLink(adapter);
  const events = new ReceiverEvents();
  let pending = '';
  let closing = false;
  link.setEncoding('latin1');
  link.on('data', (chunk: string) => {
    // CR ends a line; BEL (0x07) answers a refused command and ends it too
    const parts = (pending + chunk).replaceAll(BEL, '\r').split('\r');
    pending = parts.pop() ?? '';
    for (const raw of parts) {
      const line = raw.replace(/^\n+/, '');
      try {
        const frame = parseSlcanLine(line);
        if (frame !== undefined) events.emitFrame({ ...frame, timestamp: receiveTime(), channel: 0 });
      } catch {
        events.malformed++;
      }
    }
  });
  link.on('error', (err) => events.emitError(err));
  link.on('close', () => {
    if (!closing) events.emitError(new Error(`${adapter.channel}: the adapter closed the connection`));
  });
  link.write(openCommands);
  return makeReceiver(adapter, events, async () => {
    closing = true;
    if (link.writable) await new Promise<void>((resolve) => link.write('C\r', () => resolve()));
    await closeLink(link);
  });
}
