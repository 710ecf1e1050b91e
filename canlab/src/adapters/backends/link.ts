/**
 * Byte-stream links for boards that speak a serial protocol (GVRET, SLCAN): a TCP connection for
 * a `host:port` channel, or a serial port through the optional `serialport` package.
 */
import net from 'node:net';
import type { Duplex } from 'node:stream';
import type { AdapterConfig } from '../types';
import { AdapterUnavailableError } from '../types';
import { fixForOpenError, packageInstalled } from './fixes';

const CONNECT_TIMEOUT_MS = 5000;
export const DEFAULT_SERIAL_BAUD = 115200;

/** `host:port` (`192.168.4.1:23`, `[::1]:23`, `board.local:23`), or undefined for a serial port path. */
export function parseHostPort(channel: string): { host: string; port: number } | undefined {
  const m = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9.-]+):(\d{1,5})$/.exec(channel);
  if (m === null) return undefined;
  const port = Number(m[2]);
  if (port < 1 || port > 65535) return undefined;
  return { host: m[1]!.replace(/^\[|\]$/g, ''), port };
}

export async function openLink(adapter: AdapterConfig): Promise<Duplex> {
  const endpoint = parseHostPort(adapter.channel);
  return endpoint === undefined ? openSerial(adapter) : connectTcp(adapter, endpoint.host, endpoint.port);
}

async function connectTcp(adapter: AdapterConfig, host: string, port: number): Promise<Duplex> {
  const socket = net.connect({ host, port });
  socket.setNoDelay(true);
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            Object.assign(new Error(`no answer from ${host}:${port} within ${CONNECT_TIMEOUT_MS / 1000} s`), {
              code: 'ETIMEDOUT',
            }),
          ),
        CONNECT_TIMEOUT_MS,
      );
      socket.once('connect', () => {
        clearTimeout(timer);
        resolve();
      });
      socket.once('error', (err) => {
        clearTimeout(timer);
        reject(err);
      });
    });
  } catch (err) {
    socket.destroy();
    throw fixForOpenError(adapter, err);
  }
  return socket;
}

interface SerialPortModule {
  SerialPort: new (options: {
    path: string;
    baudRate: number;
    autoOpen: boolean;
  }) => Duplex & { open(cb: (err: Error | null) => void): void };
}

async function openSerial(adapter: AdapterConfig): Promise<Duplex> {
  if (!packageInstalled('serialport')) {
    throw new AdapterUnavailableError(
      adapter,
      `serial port ${adapter.channel} needs the 'serialport' npm package, which is not installed`,
      `npm install serialport -w canlab${adapter.backend === 'gvret' ? ", or give the board's network address as the channel (<ip>:23)" : ', or reach the adapter over TCP as <host>:<port>'}`,
    );
  }
  // a variable specifier: the package is optional and has no types here
  const moduleName = 'serialport';
  const { SerialPort } = (await import(moduleName)) as SerialPortModule;
  const port = new SerialPort({
    path: adapter.channel,
    baudRate: adapter.extras.serialBaud ?? DEFAULT_SERIAL_BAUD,
    autoOpen: false,
  });
  try {
    await new Promise<void>((resolve, reject) => port.open((err) => (err ? reject(err) : resolve())));
  } catch (err) {
    throw fixForOpenError(adapter, err);
  }
  return port;
}

/** Closes a link and resolves once it is closed (at once if it already is). */
export function closeLink(link: Duplex): Promise<void> {
  if (link.closed) return Promise.resolve();
  return new Promise<void>((resolve) => {
    link.once('close', () => resolve());
    link.destroy();
  });
}
