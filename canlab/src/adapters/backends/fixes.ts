/** The fix to name when an adapter fails to open: a package to install, a group to join, an address to check. */
import type { AdapterConfig } from '../types';
import { AdapterUnavailableError } from '../types';

/** Whether an optional package can be loaded from canlab (resolved, never executed). */
export function packageInstalled(name: string): boolean {
  try {
    require.resolve(name);
    return true;
  } catch {
    return false;
  }
}

/** Maps an OS error from opening `adapter` to an AdapterUnavailableError naming the fix; other errors pass through. */
export function fixForOpenError(adapter: AdapterConfig, err: unknown): unknown {
  if (err instanceof AdapterUnavailableError) return err;
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const message = err instanceof Error ? err.message : String(err);
  switch (code) {
    case 'EACCES':
    case 'EPERM':
      return new AdapterUnavailableError(
        adapter,
        `permission denied opening ${adapter.channel}`,
        adapter.channel.startsWith('/dev/')
          ? `join the group that owns the device (see ls -l ${adapter.channel}; usually dialout): sudo usermod -aG dialout "$USER", then log in again`
          : `run as a user allowed to open ${adapter.channel}, or join its group (sudo usermod -aG <group> "$USER", then log in again)`,
      );
    case 'ENOENT':
      return new AdapterUnavailableError(
        adapter,
        `${adapter.channel} does not exist`,
        'plug the adapter in and check the channel (ls /dev/serial/by-id/)',
      );
    case 'ECONNREFUSED':
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
    case 'ETIMEDOUT':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new AdapterUnavailableError(
        adapter,
        `cannot connect to ${adapter.channel}: ${message}`,
        'check the address and port, that the board is powered and on this network, and that no other program holds its only connection',
      );
    default:
      return err;
  }
}
