import ipaddr from 'ipaddr.js';
import type { AppConfig } from '../config';

/**
 * Which receivers a webhook may call (docs/webhooks.md "Targets"). The platform calls the URL from
 * inside its network, so without a rule a webhook is a way to make it request internal services
 * (SSRF): only http(s), and only public addresses unless `webhooks.allowPrivateTargets` says so.
 */

export const MAX_URL_LENGTH = 2048;

/** Why a webhook URL is refused before any address is looked at, or null. */
export function webhookUrlProblem(raw: string): string | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'is not an absolute URL';
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return `uses ${url.protocol.replace(/:$/, '')}; only http and https receivers are called`;
  // The list shows the URL to every admin: a password in it would be a secret shown again.
  if (url.username || url.password)
    return 'carries credentials; receivers authenticate deliveries by their signature instead';
  if (url.hash) return 'has a #fragment, which is never sent';
  return null;
}

/** Private, loopback, link-local … targets are allowed where configured, else in local and test only. */
export const privateTargetsAllowed = (config: Pick<AppConfig, 'env' | 'webhooks'>): boolean =>
  config.webhooks.allowPrivateTargets ?? (config.env === 'local' || config.env === 'test');

/** A URL's host as an IP address literal (without IPv6 brackets), or null for a name. */
export function addressLiteral(hostname: string): string | null {
  const bare = hostname.replace(/^\[(.*)\]$/, '$1');
  return ipaddr.IPv4.isValidFourPartDecimal(bare) || ipaddr.IPv6.isValid(bare) ? bare : null;
}

/**
 * Why calling this address is refused, or null. Only globally routable unicast addresses pass
 * unless private targets are allowed; an IPv4-mapped IPv6 address is judged as the IPv4 it maps.
 */
export function refusedAddress(address: string, allowPrivate: boolean): string | null {
  if (allowPrivate) return null;
  if (!ipaddr.isValid(address)) return `${address} is not an IP address`;
  const range = ipaddr.process(address).range();
  return range === 'unicast'
    ? null
    : `${address} is a ${range} address; set webhooks.allowPrivateTargets to call non-public receivers`;
}
