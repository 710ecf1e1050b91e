import dgram from 'node:dgram';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { AdapterConfig, Receiver } from '../types';
import { makeReceiver, ReceiverEvents, receiveTime } from '../types';
import { decodeFrameDatagram } from '../wire';
import { ensureBusDir, memberFileName, virtualBusDir } from './virtual-bus';

/** Joins a virtual bus as a listener (see virtual-bus.ts). */
export async function openVirtualReceiver(adapter: AdapterConfig): Promise<Receiver> {
  const dir = virtualBusDir(adapter);
  await ensureBusDir(dir);
  const events = new ReceiverEvents();
  const socket = dgram.createSocket('udp4');
  socket.on('message', (msg) => {
    const frame = decodeFrameDatagram(msg, receiveTime(), 0);
    if (frame === undefined) events.malformed++;
    else events.emitFrame(frame);
  });
  socket.on('error', (err) => events.emitError(err));
  await new Promise<void>((resolve, reject) => {
    socket.once('error', reject);
    socket.bind(0, '127.0.0.1', () => {
      socket.off('error', reject);
      resolve();
    });
  });
  const memberFile = path.join(dir, memberFileName(socket.address().port));
  await writeFile(memberFile, '');
  return makeReceiver(adapter, events, async () => {
    await rm(memberFile, { force: true });
    await new Promise<void>((resolve) => socket.close(() => resolve()));
  });
}
