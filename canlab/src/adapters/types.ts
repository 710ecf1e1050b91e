/**
 * Hardware and virtual CAN adapters. Opening an adapter gives a `Receiver`: frames arrive through
 * a listener, and nothing on it can put a frame on the bus. Sending is a separate capability in
 * `transmit.ts` that only the backends able to send provide; the capture kit never imports it.
 */
import type { CanFrame } from '../frame';

/** Backend identifiers of the spec, in the order `canlab adapters` lists them. */
export const BACKENDS = [
  'socketcan',
  'gvret',
  'slcan',
  'gs_usb',
  'pcan',
  'kvaser',
  'vector',
  'ixxat',
  'virtual',
  'udp_multicast',
] as const;
export type BackendId = (typeof BACKENDS)[number];

export function isBackendId(value: string): value is BackendId {
  return (BACKENDS as readonly string[]).includes(value);
}

/** Backend-specific settings that do not fit the common fields. */
export interface AdapterExtras {
  /** Serial line speed for gvret and slcan boards on a serial port (default 115200). */
  serialBaud?: number;
  /** socketcan through a socketcand daemon (`host` or `host:port`, port 29536 by default) instead of a local interface. */
  socketcandHost?: string;
}

/** A named adapter, as saved in `<config_dir>/adapters.json`. */
export interface AdapterConfig {
  name: string;
  backend: BackendId;
  /**
   * What to open, in the backend's terms: a SocketCAN interface (`can0`), a serial port or a
   * `host:port` (gvret `<ip>:23`, slcan), a virtual bus name, a multicast `group:port`.
   */
  channel: string;
  /** Nominal bit rate in bit/s, where the backend sets or reports one. */
  bitrate?: number;
  /** CAN FD frames expected on this bus. */
  fd: boolean;
  extras: AdapterExtras;
}

/**
 * An open adapter that only listens. Frames carry the host's receive time (epoch seconds) and
 * `channel` = the bus number within the adapter (0 for single-bus adapters; a GVRET board's
 * second bus is 1).
 */
export interface Receiver {
  readonly adapter: AdapterConfig;
  /** Datagrams or lines that could not be decoded and were skipped. */
  readonly malformed: number;
  onFrame(listener: (frame: CanFrame) => void): () => void;
  /** The link failed after opening (connection closed, socket error). */
  onError(listener: (error: Error) => void): () => void;
  close(): Promise<void>;
}

/**
 * Why an adapter could not be opened, with the one fix that makes it work (a link command, a
 * package to install, a group to join). The CLI prints `canlab: adapter '<name>' (<backend>):
 * <reason>` and `fix: <fix>`, and exits 2: the environment, not the input, needs changing.
 */
export class AdapterUnavailableError extends Error {
  constructor(
    readonly adapter: Pick<AdapterConfig, 'name' | 'backend'>,
    readonly reason: string,
    readonly fix: string,
  ) {
    super(`adapter '${adapter.name}' (${adapter.backend}): ${reason}`);
    this.name = 'AdapterUnavailableError';
  }
}

/** Exit code of a command that could not open an adapter. */
export const ADAPTER_UNAVAILABLE_EXIT = 2;

/** Host receive time in epoch seconds, with sub-millisecond resolution. */
export function receiveTime(): number {
  return (performance.timeOrigin + performance.now()) / 1000;
}

/** Listener bookkeeping shared by every backend's receiver. */
export class ReceiverEvents {
  private readonly frameListeners = new Set<(frame: CanFrame) => void>();
  private readonly errorListeners = new Set<(error: Error) => void>();
  malformed = 0;

  onFrame(listener: (frame: CanFrame) => void): () => void {
    this.frameListeners.add(listener);
    return () => this.frameListeners.delete(listener);
  }

  onError(listener: (error: Error) => void): () => void {
    this.errorListeners.add(listener);
    return () => this.errorListeners.delete(listener);
  }

  emitFrame(frame: CanFrame): void {
    for (const l of this.frameListeners) l(frame);
  }

  emitError(error: Error): void {
    for (const l of this.errorListeners) l(error);
  }
}

/** A Receiver over a backend's events; `close` is made idempotent. */
export function makeReceiver(
  adapter: AdapterConfig,
  events: ReceiverEvents,
  close: () => Promise<void>,
): Receiver {
  let closing: Promise<void> | undefined;
  return {
    adapter,
    get malformed() {
      return events.malformed;
    },
    onFrame: (l) => events.onFrame(l),
    onError: (l) => events.onError(l),
    close: () => (closing ??= close()),
  };
}
