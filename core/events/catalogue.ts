/**
 * The catalogue of platform event kinds (docs/events.md): what `GET /api/integrations/events`
 * lists, what webhooks subscribe to, and what notifications are made from. The spec leaves kinds,
 * payloads and which operation emits which event to us (Events 6); each entry says all three, and
 * who is notified.
 */

/** Role groups an event may notify: `reviewer` is the reviewer group (reviewers and admins). */
export const AUDIENCE_ROLES = ['reviewer', 'admin'] as const;
export type AudienceRole = (typeof AUDIENCE_ROLES)[number];

/** Who gets a notification of an event. The event's actor never does: nobody is told what they did. */
export interface EventAudience {
  /** Payload fields holding a user id, or a list of user ids (the job's starter, the label's annotators). */
  users?: readonly string[];
  /** Every active person with at least this role. */
  role?: AudienceRole;
}

export interface EventKindInfo {
  kind: string;
  /** The record the event is about (platform_events.subject_type). */
  subject: string;
  description: string;
  /** The payload's fields, beside the envelope (id, kind, subject, created_at). */
  payload: readonly string[];
  /** Who is notified; without it the kind goes to webhooks only. */
  notifies?: EventAudience;
  /** The notification's title; `{field}` stands for a payload field. */
  title?: string;
  /** The operation that emits it. */
  emittedBy?: string;
}

export const EVENT_CATALOGUE = [
  {
    kind: 'job.completed',
    subject: 'job',
    description: 'A job (ingest, auto-label, export, training) finished successfully',
    payload: ['job_kind', 'job_id', 'started_by', 'summary'],
    notifies: { users: ['started_by'] },
    title: 'Your {job_kind} job finished',
    emittedBy:
      "each job's final bookkeeping activity: completeIngest, runAutolabel, finishExport, registerTrainedModel",
  },
  {
    kind: 'job.failed',
    subject: 'job',
    description: 'A job failed (an export refused by the privacy gate too); the reason is in the payload',
    payload: ['job_kind', 'job_id', 'started_by', 'reason'],
    notifies: { users: ['started_by'] },
    title: 'Your {job_kind} job failed',
    emittedBy: 'failIngest, failAutolabelJob, beginExport (refused) and failExport, settleTrainingJob',
  },
  {
    kind: 'job.cancelled',
    subject: 'job',
    description: 'A job was cancelled (POST /api/jobs/{kind}/{job_id}/cancel)',
    payload: ['job_kind', 'job_id', 'started_by', 'by'],
    notifies: { users: ['started_by'] },
    title: 'Your {job_kind} job was cancelled',
    emittedBy: 'the job cancel route; settleTrainingJob for a training job',
  },
  {
    kind: 'review.conflict',
    subject: 'object',
    description:
      'A review was refused because the labels it named had changed since the reviewer read them (409 on expected_version)',
    payload: ['object_ids', 'conflicts', 'refused_by', 'edited_by'],
    notifies: { users: ['edited_by'] },
    title: 'A review of a label you changed was refused as stale',
    emittedBy: 'POST /api/objects/{object_id}/review, POST /api/objects/bulk-review (reviewObjects)',
  },
  {
    kind: 'label.issue',
    subject: 'error_candidate',
    description:
      'A reviewer confirmed an issue on a label: an error candidate judged a real label error (spec Events 2)',
    payload: ['issue_kind', 'candidate_id', 'frame_id', 'object_ids', 'annotators', 'proposed', 'applied'],
    notifies: { role: 'reviewer', users: ['annotators'] },
    title: 'Label issue confirmed: {issue_kind}',
    emittedBy: 'POST /api/errordetect/candidates/{candidate_id}/confirm and …/bulk (decideCandidate)',
  },
  {
    kind: 'campaign.approval_needed',
    subject: 'campaign',
    description:
      'An active-learning campaign paused for approval (require_approval): before a training, or before routing a later batch to review',
    payload: ['campaign_id', 'name', 'iteration', 'started_by'],
    notifies: { role: 'reviewer', users: ['started_by'] },
    title: 'Campaign {name} needs approval',
    emittedBy:
      'the campaign workflow, at each stage that waits for POST /api/campaigns/{id}/approve (docs/campaigns.md)',
  },
  {
    kind: 'campaign.review_reminder',
    subject: 'campaign',
    description:
      "A campaign's batch is still not fully reviewed after APP_CAMPAIGNS__REMINDER_HOURS, and again each time they pass",
    payload: ['campaign_id', 'name', 'iteration', 'batch_id', 'frames', 'decided', 'started_by'],
    notifies: { role: 'reviewer', users: ['started_by'] },
    title: 'Campaign {name} waits on review',
    emittedBy: 'the campaign workflow, while its stage is review (docs/campaigns.md)',
  },
  {
    kind: 'campaign.finished',
    subject: 'campaign',
    description:
      'A campaign ended: its target reached, its iterations, patience or budget used up, stopped by a person, or failed',
    payload: ['campaign_id', 'name', 'status', 'reason', 'iterations', 'best_value', 'started_by'],
    notifies: { users: ['started_by'] },
    title: 'Campaign {name} {status}: {reason}',
    emittedBy: 'the campaign workflow, at its end (docs/campaigns.md)',
  },
  {
    kind: 'flywheel.finished',
    subject: 'flywheel_run',
    description:
      'A flywheel run ended (a session through ingest → auto-label → review → export → train → gate, or a training cycle): completed with the gate’s outcome, failed at a stage, or cancelled',
    payload: ['run_id', 'kind', 'session_id', 'status', 'stage', 'gate_outcome', 'error', 'started_by'],
    notifies: { users: ['started_by'] },
    title: 'Flywheel run {kind} {status} at {stage}',
    emittedBy: 'the flywheel workflow, at its end (docs/flywheel.md)',
  },
  {
    kind: 'webhook.disabled',
    subject: 'webhook',
    description:
      'A webhook was disabled: webhooks.failuresBeforeDisabling deliveries in a row used up every attempt',
    payload: ['webhook_id', 'url', 'owner_id', 'consecutive_failures', 'last_error'],
    notifies: { users: ['owner_id'] },
    title: 'Your webhook to {url} was disabled after repeated failures',
    emittedBy: 'attemptWebhookDelivery (webhookDeliveryWorkflow), when a delivery fails for good',
  },
  {
    kind: 'session.consent_changed',
    subject: 'session',
    description: "A session's consent status, legal basis or retention date was recorded (docs/consent.md)",
    payload: ['session_id', 'name', 'before', 'after', 'legal_basis', 'retention_until'],
    notifies: { role: 'admin' },
    title: 'Consent of {name} is now {after}',
    emittedBy: 'POST /api/govern/consent (recordConsent)',
  },
  {
    kind: 'erasure.completed',
    subject: 'erasure',
    description: "A session's erasure finished, with its proof that every place is empty (docs/erasure.md)",
    payload: ['erasure_id', 'reason', 'places', 'commits_marked'],
    notifies: { role: 'admin' },
    title: 'An erasure is complete: {places} places shown empty',
    emittedBy: 'proveErasure (eraseSessionWorkflow)',
  },
  {
    kind: 'erasure.failed',
    subject: 'erasure',
    description: "A session's erasure failed, naming why (docs/erasure.md)",
    payload: ['erasure_id', 'reason', 'error'],
    notifies: { role: 'admin' },
    title: 'An erasure failed: {error}',
    emittedBy: 'failErasure (eraseSessionWorkflow)',
  },
  {
    kind: 'drift.detected',
    subject: 'governance_run',
    description:
      "A drift scan found recent sessions differ from the champion's training data in at least one feature (docs/drift.md)",
    payload: ['run_id', 'baseline_commit_id', 'features', 'sessions'],
    notifies: { role: 'reviewer' },
    title: 'Drift found in {features}',
    emittedBy: 'scanDrift (POST /api/govern/drift/scan)',
  },
] as const satisfies readonly EventKindInfo[];

export type EventKind = (typeof EVENT_CATALOGUE)[number]['kind'];

export const EVENT_KINDS: readonly string[] = EVENT_CATALOGUE.map((e) => e.kind);

/** A webhook may subscribe to every kind with this. */
export const ALL_EVENT_KINDS = '*';

/** The catalogue entry of a kind. */
export const eventKindInfo = (kind: string): EventKindInfo | undefined =>
  (EVENT_CATALOGUE as readonly EventKindInfo[]).find((e) => e.kind === kind);
