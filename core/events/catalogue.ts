/**
 * The catalogue of platform event kinds (docs/events.md): what `GET /api/integrations/events`
 * lists, what webhooks subscribe to, and what notifications are made from. The spec leaves kinds,
 * payloads and which operation emits which event to us (Events 6); each entry says all three.
 */
export interface EventKindInfo {
  kind: string;
  /** The record the event is about (platform_events.subject_type). */
  subject: string;
  description: string;
  /** The payload's fields, beside the envelope (id, kind, subject, created_at). */
  payload: readonly string[];
}

export const EVENT_CATALOGUE = [
  {
    kind: 'job.completed',
    subject: 'job',
    description: 'A job (ingest, auto-label, export, training, corpus run) finished successfully',
    payload: ['job_kind', 'job_id', 'summary'],
  },
  {
    kind: 'job.failed',
    subject: 'job',
    description: 'A job failed; the reason is in the payload',
    payload: ['job_kind', 'job_id', 'reason'],
  },
  {
    kind: 'job.cancelled',
    subject: 'job',
    description: 'A job was cancelled (POST /api/jobs/{kind}/{job_id}/cancel)',
    payload: ['job_kind', 'job_id', 'by'],
  },
] as const satisfies readonly EventKindInfo[];

export type EventKind = (typeof EVENT_CATALOGUE)[number]['kind'];

export const EVENT_KINDS: readonly string[] = EVENT_CATALOGUE.map((e) => e.kind);

/** A webhook may subscribe to every kind with this. */
export const ALL_EVENT_KINDS = '*';
