/**
 * Test helper process: puts known frames on a bus through the transmit capability.
 * Usage: tsx send-frames.ts <backend> <channel> <count> [intervalMs]
 * Frame i: id 0x100 + (i % 4), DLC 8, data [i & 0xff, i >> 8, 0xA5, 0, 0, 0, 0, 0x5A].
 * Prints `sent <count>` when done.
 */
import { openTransmitter } from '../../src/adapters/transmit';
import { isBackendId } from '../../src/adapters/types';

async function main(): Promise<void> {
  const [backend, channel, countText, intervalText] = process.argv.slice(2);
  if (backend === undefined || !isBackendId(backend) || channel === undefined)
    throw new Error('usage: send-frames <backend> <channel> <count> [intervalMs]');
  const count = Number(countText ?? '10');
  const interval = Number(intervalText ?? '0');
  const tx = await openTransmitter({ name: 'sender', backend, channel, fd: false, extras: {} });
  for (let i = 0; i < count; i++) {
    const data = Uint8Array.from([i & 0xff, i >> 8, 0xa5, 0, 0, 0, 0, 0x5a]);
    await tx.send({
      timestamp: 0,
      id: 0x100 + (i % 4),
      extended: false,
      remote: false,
      error: false,
      fd: false,
      brs: false,
      esi: false,
      dlc: 8,
      data,
      channel: 0,
    });
    if (interval > 0) await new Promise((r) => setTimeout(r, interval));
  }
  await tx.close();
  process.stdout.write(`sent ${count}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`send-frames: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exitCode = 1;
});
