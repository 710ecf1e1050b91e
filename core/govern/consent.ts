/**
 * Consent of a session's data subjects (docs/consent.md). A session carries one status of a closed
 * vocabulary; a deployment names the statuses that block the uses the spec lists (export,
 * training, campaigns and active learning). Pure: the database side is activities/govern/consent.ts.
 */

export const CONSENT_STATUSES = ['granted', 'not_required', 'unknown', 'missing', 'withdrawn'] as const;
export type ConsentStatus = (typeof CONSENT_STATUSES)[number];

/** What every session holds before anyone records consent (the column's default). */
export const UNRECORDED_CONSENT: ConsentStatus = 'unknown';

/** The statuses the spec names as excluded; `unknown` stays allowed so existing sessions keep working. */
export const DEFAULT_BLOCKING: readonly ConsentStatus[] = ['withdrawn', 'missing'];

/**
 * Statuses that say consent is settled in the data's favour: no deployment may block them, or
 * nothing could ever be exported or trained on.
 */
export const ALWAYS_ALLOWED: readonly ConsentStatus[] = ['granted', 'not_required'];

/** The uses consent gates; campaigns covers active-learning selection. */
export const CONSENT_USES = ['export', 'training', 'campaigns'] as const;
export type ConsentUse = (typeof CONSENT_USES)[number];

const USE_WORDS: Record<ConsentUse, string> = {
  export: 'exported',
  training: 'trained on',
  campaigns: 'selected by a campaign or active learning',
};

/**
 * The statuses a use may read. The gate is written as an allow-list, so a value outside the
 * vocabulary (written by hand into the database) blocks rather than slips through.
 */
export function allowedStatuses(blocking: readonly ConsentStatus[]): ConsentStatus[] {
  return CONSENT_STATUSES.filter((s) => !blocking.includes(s));
}

export function isBlocking(status: string, blocking: readonly ConsentStatus[]): boolean {
  return !allowedStatuses(blocking).includes(status as ConsentStatus);
}

/** What a status blocks, use by use. Every use is gated by the same statuses (spec: "excluded from export, training and campaigns"). */
export function consentGate(status: ConsentStatus, blocking: readonly ConsentStatus[]) {
  const blocked = isBlocking(status, blocking);
  return {
    consent_status: status,
    blocking: blocked,
    blocks: Object.fromEntries(CONSENT_USES.map((u) => [u, blocked])) as Record<ConsentUse, boolean>,
    blocking_statuses: [...blocking],
  };
}

export interface BlockedSession {
  session_id: string;
  name: string | null;
  consent_status: string;
}

/** The sentence a refusal or an export report gives for sessions a use may not read. */
export function blockedSentence(use: ConsentUse, sessions: readonly BlockedSession[]): string {
  const named = sessions
    .map((s) => `${s.name ?? 'an erased session'} (${s.session_id}, consent ${s.consent_status})`)
    .join(', ');
  return `${sessions.length} session(s) may not be ${USE_WORDS[use]} because of their consent status: ${named}`;
}

/** Parses the configured list (`APP_CONSENT__BLOCKING`, comma-separated); refuses what would block settled consent. */
export function parseBlocking(text: string): ConsentStatus[] {
  const values = [
    ...new Set(
      text
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  ];
  for (const v of values) {
    if (!CONSENT_STATUSES.includes(v as ConsentStatus))
      throw new Error(`unknown consent status ${v}; one of ${CONSENT_STATUSES.join(', ')}`);
    if (ALWAYS_ALLOWED.includes(v as ConsentStatus))
      throw new Error(`consent status ${v} cannot block: it records consent that allows the use`);
  }
  return values as ConsentStatus[];
}

/** Where each use checks consent, as the gate route and docs/consent.md tell a data-protection officer. */
export const CONSENT_ENFORCED_AT: Record<ConsentUse, readonly string[]> = {
  export: [
    'POST /api/export and POST /api/datasets/export: blocked sessions are left out of the slice, and the job names them (consent_excluded)',
    'GET /api/datasets/{commit_id}/download, POST /api/datasets/shards, POST /api/datasets/lake/publish: a commit holding a blocked session is refused (422)',
  ],
  training: [
    'POST /api/training/start and POST /api/training/sweep, and again when the job is prepared: a commit holding a blocked session is refused (422)',
  ],
  campaigns: [
    'campaigns and active learning are not built yet; their selection must narrow its slice with excludeBlockedSessions and a fixed set of sessions must pass assertConsentAllows (activities/govern/consent.ts)',
  ],
};
