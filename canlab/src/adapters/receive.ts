/**
 * Opening adapters to listen. This module and everything it imports can only receive; the
 * capture kit's whole adapter surface is this file (transmit.ts is separate and never imported
 * here).
 */
import type { CanFrame } from '../frame';
import { openGvretReceiver } from './backends/gvret';
import { fixForOpenError } from './backends/fixes';
import { openSlcanReceiver } from './backends/slcan';
import { openSocketcanReceiver } from './backends/socketcan';
import { openMulticastReceiver } from './backends/udp-multicast';
import { isVendorBackend, refuseVendorBackend } from './backends/vendor';
import { openVirtualReceiver } from './backends/virtual';
import type { AdapterConfig, Receiver } from './types';
import { AdapterUnavailableError } from './types';

/** Opens `adapter` for listening; throws AdapterUnavailableError (with the fix) when it cannot be opened. */
export async function openReceiver(adapter: AdapterConfig): Promise<Receiver> {
  const backend = adapter.backend;
  try {
    switch (backend) {
      case 'virtual':
        return await openVirtualReceiver(adapter);
      case 'udp_multicast':
        return await openMulticastReceiver(adapter);
      case 'socketcan':
        return await openSocketcanReceiver(adapter);
      case 'gvret':
        return await openGvretReceiver(adapter);
      case 'slcan':
        return await openSlcanReceiver(adapter);
      default:
        if (isVendorBackend(backend)) return refuseVendorBackend({ ...adapter, backend });
        throw new AdapterUnavailableError(
          adapter,
          `unknown backend '${String(backend)}'`,
          'use one of the backends canlab adapters lists',
        );
    }
  } catch (err) {
    throw fixForOpenError(adapter, err);
  }
}

/** Result of the adapter Test action. */
export interface AdapterTestResult {
  ok: boolean;
  /** Frames heard while listening. */
  frames: number;
  /** Distinct ids heard, `0x123` / `0x18DAF110x`. */
  ids: string[];
  listenedMs: number;
  /** Why opening failed, and the fix. */
  reason?: string;
  fix?: string;
}

export const ADAPTER_TEST_LISTEN_MS = 1000;

/** The Test action: opens the adapter, listens for `listenMs` (1 s), closes it. Never transmits. */
export async function testAdapter(
  adapter: AdapterConfig,
  listenMs = ADAPTER_TEST_LISTEN_MS,
): Promise<AdapterTestResult> {
  let receiver: Receiver;
  try {
    receiver = await openReceiver(adapter);
  } catch (err) {
    if (err instanceof AdapterUnavailableError)
      return { ok: false, frames: 0, ids: [], listenedMs: 0, reason: err.reason, fix: err.fix };
    throw err;
  }
  const ids = new Set<string>();
  let frames = 0;
  let linkError: Error | undefined;
  receiver.onFrame((f: CanFrame) => {
    frames++;
    ids.add(`0x${f.id.toString(16).toUpperCase()}${f.extended ? 'x' : ''}`);
  });
  receiver.onError((e) => (linkError ??= e));
  const started = performance.now();
  await new Promise((resolve) => setTimeout(resolve, listenMs));
  await receiver.close();
  const listenedMs = Math.round(performance.now() - started);
  if (linkError !== undefined)
    return {
      ok: false,
      frames,
      ids: [...ids],
      listenedMs,
      reason: linkError.message,
      fix: 'check the cable or connection and that no other program holds the adapter',
    };
  return { ok: true, frames, ids: [...ids].sort(), listenedMs };
}
