/**
 * The transmit capability, separate from receiving: only the window's inject route (behind ARM
 * TX and the token) and test senders import this module. The capture kit never does, and a test
 * walks its import graph to keep it so. Only the backends on this host's loopback can send here;
 * every other backend is receive-only in canlab.
 */
import dgram from 'node:dgram';
import { dlcToLength, type CanFrame } from '../frame';
import type { Transmitter } from '../workspace/types';
import { MULTICAST_INTERFACE, multicastEndpoint } from './backends/udp-multicast';
import { busMemberPorts, virtualBusDir } from './backends/virtual-bus';
import type { AdapterConfig } from './types';
import { AdapterUnavailableError } from './types';
import { BRS, ERROR, ESI, EXTENDED, FD, HEADER, MAGIC0, MAGIC1, REMOTE, VERSION } from './wire';

/** The datagram for one frame (layout in wire.ts). */
export function encodeFrameDatagram(frame: CanFrame): Buffer {
  const length = frame.remote ? 0 : dlcToLength(frame.dlc, frame.fd);
  if (frame.data.length !== length)
    throw new RangeError(
      `frame 0x${frame.id.toString(16)}: DLC ${frame.dlc} needs ${length} data bytes, got ${frame.data.length}`,
    );
  const out = Buffer.alloc(HEADER + length);
  out[0] = MAGIC0;
  out[1] = MAGIC1;
  out[2] = VERSION;
  out[3] =
    (frame.extended ? EXTENDED : 0) |
    (frame.remote ? REMOTE : 0) |
    (frame.error ? ERROR : 0) |
    (frame.fd ? FD : 0) |
    (frame.brs ? BRS : 0) |
    (frame.esi ? ESI : 0);
  out.writeUInt32BE(frame.id >>> 0, 4);
  out[8] = frame.dlc;
  out.set(frame.data, HEADER);
  return out;
}

export interface AdapterTransmitter extends Transmitter {
  close(): Promise<void>;
}

/** Backends that can transmit through canlab. */
export const TRANSMIT_BACKENDS = ['virtual', 'udp_multicast'] as const;

export async function openTransmitter(adapter: AdapterConfig): Promise<AdapterTransmitter> {
  const socket = dgram.createSocket('udp4');
  const sendTo = (datagram: Buffer, port: number, address: string): Promise<void> =>
    new Promise((resolve, reject) =>
      socket.send(datagram, port, address, (err) => (err ? reject(err) : resolve())),
    );
  let deliver: (datagram: Buffer) => Promise<void>;
  if (adapter.backend === 'virtual') {
    const dir = virtualBusDir(adapter);
    deliver = async (datagram) => {
      for (const port of await busMemberPorts(dir)) await sendTo(datagram, port, '127.0.0.1');
    };
  } else if (adapter.backend === 'udp_multicast') {
    const { group, port } = multicastEndpoint(adapter);
    deliver = (datagram) => sendTo(datagram, port, group);
  } else {
    throw new AdapterUnavailableError(
      adapter,
      'canlab transmits only on the virtual and udp_multicast backends',
      `inject through an adapter with backend ${TRANSMIT_BACKENDS.join(' or ')}`,
    );
  }
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, '127.0.0.1', () => {
      socket.off('error', reject);
      resolve();
    });
  });
  if (adapter.backend === 'udp_multicast') {
    socket.setMulticastInterface(MULTICAST_INTERFACE);
    // TTL 0: the datagrams never leave this host
    socket.setMulticastTTL(0);
    socket.setMulticastLoopback(true);
  }
  return {
    send: (frame: CanFrame) => deliver(encodeFrameDatagram(frame)),
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
