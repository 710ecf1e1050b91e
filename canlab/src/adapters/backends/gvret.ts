/**
 * `gvret`: GVRET / SavvyCAN boards (CANDue, M2RET, ESP32RET) on a serial port or over TCP
 * (`<ip>:23`), in GVRET's binary protocol. On open canlab sends only the binary-mode switch
 * (0xE7 0xE7) and three queries (device info, bus count, bus parameters): never the frame
 * command 0xF1 0x00 toward the board, and never the bus setup 0xF1 0x05 (which a board stores in
 * EEPROM); the board keeps the bit rate and mode it was configured with.
 *
 * Board → host packets (all start 0xF1 <command>):
 * - 0x00 frame: u32le timestamp µs, u32le id (bit 31 = extended), bus<<4 | DLC, data, checksum
 * - 0x01 time sync: u32le · 0x06 bus params: 10 bytes · 0x07 device info: 6 bytes
 * - 0x09 keepalive: 0xDE 0xAD · 0x0C bus count: 1 byte · 0x0D extended buses: 15 bytes
 */
import type { Duplex } from 'node:stream';
import type { CanFrame } from '../../frame';
import type { AdapterConfig, Receiver } from '../types';
import { makeReceiver, ReceiverEvents, receiveTime } from '../types';
import { closeLink, openLink } from './link';

const SYNC = 0xf1;
const FRAME = 0x00;
/** Bytes after 0xF1 <command> for the fixed-size replies. */
const REPLY_LENGTH = new Map<number, number>([
  [0x01, 4],
  [0x02, 2],
  [0x03, 9],
  [0x06, 10],
  [0x07, 6],
  [0x09, 2],
  [0x0c, 1],
  [0x0d, 15],
]);

export const GVRET_OPEN_SEQUENCE = Buffer.from([0xe7, 0xe7, SYNC, 0x07, SYNC, 0x0c, SYNC, 0x06]);

/** Incremental parser of the board's byte stream. */
export class GvretParser {
  private pending = Buffer.alloc(0);
  /** Bus count the board reported (0x0C), if it did. */
  busCount: number | undefined;

  constructor(
    private readonly onFrame: (frame: CanFrame) => void,
    private readonly onMalformed: () => void,
  ) {}

  push(chunk: Buffer): void {
    let buf = this.pending.length > 0 ? Buffer.concat([this.pending, chunk]) : chunk;
    let i = 0;
    while (i < buf.length) {
      if (buf[i] !== SYNC) {
        // text the board prints before binary mode, or line noise: skip to the next sync byte
        i++;
        continue;
      }
      if (i + 1 >= buf.length) break;
      const command = buf[i + 1]!;
      if (command === FRAME) {
        if (i + 11 > buf.length) break;
        const dlc = buf[i + 10]! & 0x0f;
        const total = 11 + Math.min(dlc, 8) + 1;
        if (i + total > buf.length) break;
        this.onFrame(this.frameAt(buf, i, dlc));
        i += total;
        continue;
      }
      const length = REPLY_LENGTH.get(command);
      if (length === undefined) {
        this.onMalformed();
        i++;
        continue;
      }
      if (i + 2 + length > buf.length) break;
      if (command === 0x0c) this.busCount = buf[i + 2];
      i += 2 + length;
    }
    buf = buf.subarray(i);
    this.pending = Buffer.from(buf);
  }

  private frameAt(buf: Buffer, at: number, dlc: number): CanFrame {
    const rawId = buf.readUInt32LE(at + 6);
    const extended = (rawId & 0x80000000) !== 0;
    const length = Math.min(dlc, 8);
    return {
      timestamp: receiveTime(),
      id: extended ? rawId & 0x1fffffff : rawId & 0x7ff,
      extended,
      remote: false,
      error: false,
      fd: false,
      brs: false,
      esi: false,
      dlc: length,
      data: new Uint8Array(buf.subarray(at + 11, at + 11 + length)),
      channel: buf[at + 10]! >> 4,
    };
  }
}

export async function openGvretReceiver(adapter: AdapterConfig): Promise<Receiver> {
  const link: Duplex = await openLink(adapter);
  const events = new ReceiverEvents();
  const parser = new GvretParser(
    (f) => events.emitFrame(f),
    () => events.malformed++,
  );
  let closing = false;
  link.on('data', (chunk: Buffer) => parser.push(chunk));
  link.on('error', (err) => events.emitError(err));
  link.on('close', () => {
    if (!closing) events.emitError(new Error(`${adapter.channel}: the board closed the connection`));
  });
  link.write(GVRET_OPEN_SEQUENCE);
  return makeReceiver(adapter, events, async () => {
    closing = true;
    await closeLink(link);
  });
}
