/**
 * The datagram encoding of one frame on the `virtual` and `udp_multicast` buses (docs/adapters.md):
 *
 * | offset | size | field |
 * | --- | --- | --- |
 * | 0 | 2 | magic `CL` (0x43 0x4C) |
 * | 2 | 1 | version, 1 |
 * | 3 | 1 | flags: 0x01 extended, 0x02 remote, 0x04 error, 0x08 FD, 0x10 BRS, 0x20 ESI |
 * | 4 | 4 | id, unsigned big-endian |
 * | 8 | 1 | DLC (0–15) |
 * | 9 | n | data: n = the DLC's length (0 for a remote frame) |
 *
 * No timestamp and no channel travel: a receiver stamps frames with its own receive time and its
 * own bus number, as a CAN controller does. This module only decodes; the encoder lives in
 * transmit.ts, so that nothing the capture kit imports can produce a frame for the bus.
 */
import { dlcToLength, type CanFrame } from '../frame';

export const MAGIC0 = 0x43;
export const MAGIC1 = 0x4c;
export const VERSION = 1;
export const HEADER = 9;
export const EXTENDED = 0x01;
export const REMOTE = 0x02;
export const ERROR = 0x04;
export const FD = 0x08;
export const BRS = 0x10;
export const ESI = 0x20;

/** Decodes one datagram; undefined for anything that is not a well-formed version-1 frame. */
export function decodeFrameDatagram(buf: Buffer, timestamp: number, channel: number): CanFrame | undefined {
  if (buf.length < HEADER || buf[0] !== MAGIC0 || buf[1] !== MAGIC1 || buf[2] !== VERSION) return undefined;
  const flags = buf[3]!;
  const id = buf.readUInt32BE(4);
  const dlc = buf[8]!;
  const extended = (flags & EXTENDED) !== 0;
  const remote = (flags & REMOTE) !== 0;
  const fd = (flags & FD) !== 0;
  if (dlc > 15 || id > (extended ? 0x1fffffff : 0x7ff)) return undefined;
  const length = remote ? 0 : dlcToLength(dlc, fd);
  if (buf.length !== HEADER + length) return undefined;
  return {
    timestamp,
    id,
    extended,
    remote,
    error: (flags & ERROR) !== 0,
    fd,
    brs: (flags & BRS) !== 0,
    esi: (flags & ESI) !== 0,
    dlc,
    data: new Uint8Array(buf.subarray(HEADER)),
    channel,
  };
}
