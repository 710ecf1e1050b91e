/**
 * pcap and pcapng SocketCAN captures written by scapy (and converted by Wireshark's editcap), read by
 * canlab and compared frame by frame with what tshark reads in them (canlab/tools/wireshark_fixtures.py
 * wrote both the captures and the listings). Also: content detection, a refused link type, truncated
 * files, and nanosecond timestamps.
 */
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { detectCaptureFormat, readCapture } from '../../src/formats';
import { sniffPcap, sniffPcapng } from '../../src/formats/pcap';
import { collect, tempDir } from './helpers';
import { expectSniffClaims } from './sniff-corpus';
import { expectSameAsTshark, FORMAT_FIXTURES, tsharkListing } from './tshark-listing';

const DIR = path.join(FORMAT_FIXTURES, 'pcap');
const fx = (name: string): string => path.join(DIR, name);
const tmp = tempDir();
afterAll(() => tmp.cleanup());

// Epoch timestamps in a double are good to about 0.24 µs; the nanosecond fixtures count from 1.1 s,
// where a double holds every nanosecond.
const EPOCH = 5e-7;
const NANO = 1e-12;

describe('every frame as tshark reads it', () => {
  test.each([
    ['socketcan-usec-le.pcap', 'pcap', EPOCH],
    ['socketcan-nsec-be.pcap', 'pcap', NANO],
    ['socketcan-nsec.pcapng', 'pcapng', NANO],
    ['socketcan-interfaces.pcapng', 'pcapng', EPOCH],
    ['socketcan-tsoffset-be.pcapng', 'pcapng', EPOCH],
  ])('%s', async (name, format, tolerance) => {
    expect((await detectCaptureFormat(fx(name))).name).toBe(format);
    // the Simple Packet Block at the end of socketcan-interfaces.pcapng has no timestamp: read as 0
    expectSameAsTshark(await collect(readCapture(fx(name))), tsharkListing(fx(name)), {
      tolerance,
      untimed: () => 0,
    });
  });

  test('the interfaces file: channels are interface numbers, the Ethernet one (2) is skipped', async () => {
    const frames = await collect(readCapture(fx('socketcan-interfaces.pcapng')));
    expect([...new Set(frames.map((f) => f.channel))].sort()).toEqual([0, 1, 3]);
    expect(frames.map((f) => f.direction ?? '-').join(' ')).toBe('rx tx - rx tx - rx tx - rx tx -');
  });

  test('nanoseconds are kept: the pcap and its pcapng conversion agree to the nanosecond', async () => {
    const pcap = await collect(readCapture(fx('socketcan-nsec-be.pcap')));
    const pcapng = await collect(readCapture(fx('socketcan-nsec.pcapng')));
    expect(pcap[0]!.timestamp).toBe(1.123456789);
    expect(pcapng.map((f) => f.timestamp)).toEqual(pcap.map((f) => f.timestamp));
  });

  test('the content decides, not the extension', async () => {
    const file = tmp.file('capture.log');
    copyFileSync(fx('socketcan-nsec.pcapng'), file);
    expect((await detectCaptureFormat(file)).name).toBe('pcapng');
    expect(await collect(readCapture(file))).toHaveLength(11);
  });
});

describe('refused', () => {
  async function failure(file: string): Promise<string> {
    try {
      await collect(readCapture(file));
    } catch (err) {
      return String(err)
        .replace(DIR + '/', '')
        .replace(tmp.dir + '/', '');
    }
    throw new Error(`${file} was read`);
  }

  test('an Ethernet capture, naming its link type', async () => {
    expect(await failure(fx('ethernet.pcap'))).toBe(
      'ethernet.pcap@20: pcap: link type 1 (LINKTYPE_ETHERNET): canlab reads SocketCAN captures, link type 227 (LINKTYPE_CAN_SOCKETCAN)',
    );
    expect(await failure(fx('ethernet.pcapng'))).toBe(
      'ethernet.pcapng@0: pcapng: no SocketCAN interface, only link type 1 (LINKTYPE_ETHERNET): canlab reads link type 227 (LINKTYPE_CAN_SOCKETCAN)',
    );
  });

  test('a pcap cut inside its last packet, at that packet record', async () => {
    const bytes = readFileSync(fx('socketcan-usec-le.pcap'));
    const file = tmp.file('cut.pcap');
    writeFileSync(file, bytes.subarray(0, bytes.length - 3));
    // the last packet record: a 16-byte header, then a 9-byte frame (8-byte header, 1 data byte)
    expect(await failure(file)).toBe(
      `cut.pcap@${bytes.length - 25}: pcap: truncated: the packet record needs 25 bytes, the file ends after 22`,
    );
    const corrupt = Buffer.from(bytes);
    corrupt.writeUInt32LE(0xffffff00, 24 + 8); // a captured length no file holds
    writeFileSync(file, corrupt);
    expect(await failure(file)).toBe(
      `cut.pcap@24: pcap: truncated: the packet record needs ${16 + 0xffffff00} bytes, the file ends after ${bytes.length - 24}`,
    );
    writeFileSync(file, bytes.subarray(0, 30));
    expect(await failure(file)).toBe(
      'cut.pcap@24: pcap: truncated: the packet record header needs 16 bytes, the file ends after 6',
    );
  });

  test('a pcapng cut inside a block, at that block', async () => {
    const bytes = readFileSync(fx('socketcan-nsec.pcapng'));
    const file = tmp.file('cut.pcapng');
    writeFileSync(file, bytes.subarray(0, bytes.length - 10));
    const message = await failure(file);
    expect(message).toMatch(
      /^cut\.pcapng@\d+: pcapng: truncated: the block needs \d+ bytes, the file ends after \d+$/,
    );
    const offset = Number(/@(\d+)/.exec(message)![1]);
    expect(bytes.readUInt32LE(offset)).toBe(6); // an Enhanced Packet Block starts there
  });

  test('a packet shorter than the SocketCAN header, and a length the packet does not hold', async () => {
    const bytes = Buffer.from(readFileSync(fx('socketcan-usec-le.pcap')));
    const file = tmp.file('bad.pcap');
    bytes.writeUInt32LE(6, 24 + 8); // first record: 6 captured bytes
    writeFileSync(file, bytes.subarray(0, 24 + 16 + 6));
    expect(await failure(file)).toBe(
      'bad.pcap@24: pcap: packet of 6 bytes is shorter than the 8-byte SocketCAN header',
    );
    const long = Buffer.from(readFileSync(fx('socketcan-usec-le.pcap')));
    long[24 + 16 + 4] = 7; // first frame (4 data bytes captured) claims 7
    writeFileSync(file, long);
    expect(await failure(file)).toBe(
      'bad.pcap@24: pcap: packet holds 4 data bytes, its SocketCAN header says 7 (captured with too short a snapshot length?)',
    );
  });
});

test('the pcap and pcapng content tests claim their captures and nothing else', async () => {
  await expectSniffClaims(sniffPcap, (f) => f.endsWith('.pcap'));
  await expectSniffClaims(sniffPcapng, (f) => f.endsWith('.pcapng'));
});
