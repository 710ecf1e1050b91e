/**
 * `udp_multicast`: frames as datagrams (wire.ts) to an IPv4 multicast group, joined on the
 * loopback interface with TTL 0 so that the traffic stays on this host. The channel is
 * `<group>:<port>`; the default is 239.255.67.76:42424 (organisation-local scope).
 */
import dgram from 'node:dgram';
import net from 'node:net';
import type { AdapterConfig, Receiver } from '../types';
import { AdapterUnavailableError, makeReceiver, ReceiverEvents, receiveTime } from '../types';
import { decodeFrameDatagram } from '../wire';

export const DEFAULT_MULTICAST_CHANNEL = '239.255.67.76:42424';
/** Interface the group is joined and sent on. */
export const MULTICAST_INTERFACE = '127.0.0.1';

export function multicastEndpoint(adapter: Pick<AdapterConfig, 'name' | 'backend' | 'channel'>): {
  group: string;
  port: number;
} {
  const channel = adapter.channel === '' ? DEFAULT_MULTICAST_CHANNEL : adapter.channel;
  const m = /^(\d+\.\d+\.\d+\.\d+):(\d+)$/.exec(channel);
  const group = m?.[1] ?? '';
  const port = Number(m?.[2]);
  const first = Number(group.split('.')[0]);
  if (m === null || !net.isIPv4(group) || first < 224 || first > 239 || !(port > 0 && port < 65536)) {
    throw new AdapterUnavailableError(
      adapter,
      `'${channel}' is not an IPv4 multicast <group>:<port>`,
      `use a group in 224.0.0.0/4 and a port, e.g. --channel ${DEFAULT_MULTICAST_CHANNEL}`,
    );
  }
  return { group, port };
}

export async function openMulticastReceiver(adapter: AdapterConfig): Promise<Receiver> {
  const { group, port } = multicastEndpoint(adapter);
  const events = new ReceiverEvents();
  // reuseAddr lets several listeners on this host share the group's port; binding to the group
  // address (not 0.0.0.0) keeps unicast traffic from other interfaces out
  const socket = dgram.createSocket({ type: 'udp4', reuseAddr: true });
  socket.on('message', (msg) => {
    const frame = decodeFrameDatagram(msg, receiveTime(), 0);
    if (frame === undefined) events.malformed++;
    else events.emitFrame(frame);
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(port, group, () => {
      try {
        socket.addMembership(group, MULTICAST_INTERFACE);
      } catch (err) {
        reject(err instanceof Error ? err : new Error(String(err)));
        return;
      }
      socket.off('error', reject);
      resolve();
    });
  });
  socket.on('error', (err) => events.emitError(err));
  return makeReceiver(adapter, events, async () => {
    await new Promise<void>((resolve) => socket.close(() => resolve()));
  });
}
