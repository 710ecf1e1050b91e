import { createHash } from 'node:crypto';
import type { EventKindInfo } from './catalogue';

/** Pure parts of the notification fan-out (docs/events.md "Audiences"). */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Longest notification title; a long payload value is cut rather than stored whole. */
export const MAX_TITLE = 200;

type Payload = Record<string, unknown>;

/**
 * The users an event names for notification: the user ids (or lists of them) in the payload
 * fields the kind's audience lists, each once, the actor left out. Anything that is not a user id
 * is ignored, so a payload can never address a notification to something else.
 */
export function namedRecipients(info: EventKindInfo, payload: Payload, actorId: string | null): string[] {
  const ids = new Set<string>();
  for (const field of info.notifies?.users ?? []) {
    const value = payload[field];
    for (const v of Array.isArray(value) ? value : [value])
      if (typeof v === 'string' && UUID.test(v)) ids.add(v.toLowerCase());
  }
  if (actorId) ids.delete(actorId.toLowerCase());
  return [...ids];
}

/** The notification title: the kind's template with `{field}` filled from the payload, else its description. */
export function notificationTitle(info: EventKindInfo, payload: Payload): string {
  const title = (info.title ?? info.description).replace(/\{([a-z_]+)\}/g, (whole, field: string) => {
    const v = payload[field];
    return typeof v === 'string' || typeof v === 'number' ? String(v) : whole;
  });
  return title.length > MAX_TITLE ? `${title.slice(0, MAX_TITLE - 1)}…` : title;
}

/**
 * A fixed event id for an event that must be recorded at most once (a job's end, emitted by an
 * activity Temporal may retry): the same parts always give the same id, so the second emit finds
 * the first. SHA-256 of the parts, laid out as an RFC 9562 version-8 UUID.
 */
export function onceEventId(...parts: string[]): string {
  const h = createHash('sha256').update(JSON.stringify(parts)).digest();
  h[6] = (h[6]! & 0x0f) | 0x80;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const hex = h.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
