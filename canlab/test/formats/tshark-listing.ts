/**
 * What Wireshark's tshark reads in a fixture, frame by frame, as canlab/tools/wireshark_fixtures.py
 * stored it beside the fixture (`<fixture>.tshark.json`), and the comparison of canlab's frames with
 * it. Tests read the stored listing, so they need neither tshark nor scapy.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { lengthToDlc, type CanFrame } from '../../src/frame';

export const FORMAT_FIXTURES = path.resolve(__dirname, '../fixtures/formats');

/** One frame as tshark shows it (see the script for how each field is taken). */
export interface TsharkFrame {
  /** frame.time_epoch as tshark prints it (nanosecond digits), null when the record has no timestamp. */
  time: string | null;
  /** frame.interface_id: pcapng interfaces in file order; null for pcap and BUSMASTER logs. */
  interface: number | null;
  direction: 'rx' | 'tx' | null;
  /** can.id, or for error frames the error class (the masks of the can.err.* flags set). */
  id: number;
  extended: boolean;
  remote: boolean;
  error: boolean;
  fd: boolean;
  brs: boolean;
  esi: boolean;
  /** can.len: data bytes, or the requested length of a remote frame. */
  length: number;
  /** The last reserved byte of a classic frame's SocketCAN header (Linux's len8_dlc). */
  len8_dlc: number;
  /** The payload in hex; null for remote frames. */
  data: string | null;
}

/** The listing stored beside `fixture` (a path). */
export function tsharkListing(fixture: string): TsharkFrame[] {
  return (JSON.parse(readFileSync(`${fixture}.tshark.json`, 'utf8')) as { frames: TsharkFrame[] }).frames;
}

/** The DLC canlab gives the frame tshark shows: its length, FD length code, or classic len8_dlc. */
function expectedDlc(t: TsharkFrame): number {
  if (t.fd) return lengthToDlc(t.length, true);
  return t.length === 8 && t.len8_dlc > 8 && t.len8_dlc <= 15 ? t.len8_dlc : t.length;
}

/**
 * Compares every frame with tshark's: same count; id, flags, DLC and data equal; the timestamp
 * within `tolerance` seconds of tshark's (`untimed` when tshark shows none); channel and direction as
 * `expect` gives them (tshark's interface number and packet direction unless overridden).
 */
export function expectSameAsTshark(
  actual: CanFrame[],
  listing: TsharkFrame[],
  options: {
    tolerance: number;
    untimed?: (i: number) => number | undefined;
    channel?: (t: TsharkFrame, i: number) => number;
    direction?: (t: TsharkFrame, i: number) => 'rx' | 'tx' | undefined;
  },
): void {
  expect(actual).toHaveLength(listing.length);
  listing.forEach((t, i) => {
    const a = actual[i]!;
    const time = t.time === null ? options.untimed?.(i) : Number(t.time);
    if (time !== undefined && !(Math.abs(a.timestamp - time) <= options.tolerance))
      throw new Error(`frame ${i}: timestamp ${a.timestamp} is not tshark's ${t.time ?? time}`);
    const got = {
      i,
      id: a.id,
      extended: a.extended,
      remote: a.remote,
      error: a.error,
      fd: a.fd,
      brs: a.brs,
      esi: a.esi,
      dlc: a.dlc,
      data: a.remote ? null : Buffer.from(a.data).toString('hex'),
      channel: a.channel,
      direction: a.direction,
    };
    expect(got).toEqual({
      i,
      id: t.id,
      extended: t.extended,
      remote: t.remote,
      error: t.error,
      fd: t.fd,
      brs: t.brs,
      esi: t.esi,
      dlc: expectedDlc(t),
      data: t.data,
      channel: options.channel?.(t, i) ?? t.interface ?? 0,
      direction: options.direction ? options.direction(t, i) : (t.direction ?? undefined),
    });
  });
}
