/**
 * The health gate. Health rows come from the inspector and from other writers, each tagged with
 * its indexer_version; only the newest row of the inspector's own version counts, so another
 * writer's passing row can never lift a quarantine. An admin override decides instead when it is
 * newer than that row; a later inspector row decides again.
 */

/** The inspector's own indexer_version: bump it when the checks change meaning. */
export const INSPECTOR_VERSION = 'inspector@1';

export interface GateRow {
  id: string;
  indexerVersion: string;
  passed: boolean;
  score: number;
  createdAt: Date;
}

export interface GateOverride {
  id: string;
  quarantined: boolean;
  reason: string;
  actorId: string | null;
  createdAt: Date;
}

export type GateVerdict = 'passed' | 'failed' | 'uninspected';

export interface GateDecision {
  /** `uninspected`: no row of the inspector's version and no override. */
  verdict: GateVerdict;
  quarantined: boolean;
  /** What decided: the inspector's newest row, an admin override, or nothing yet. */
  decidedBy: 'inspector' | 'override' | 'none';
  row: GateRow | null;
  override: GateOverride | null;
}

const newest = <T extends { createdAt: Date }>(items: T[]): T | null =>
  items.reduce<T | null>(
    (best, x) => (best === null || x.createdAt.getTime() > best.createdAt.getTime() ? x : best),
    null,
  );

export function healthGate(
  rows: GateRow[],
  inspectorVersion: string = INSPECTOR_VERSION,
  overrides: GateOverride[] = [],
): GateDecision {
  const row = newest(rows.filter((r) => r.indexerVersion === inspectorVersion));
  const override = newest(overrides);
  // An override made at the same instant as the row is the later human decision.
  if (override && (!row || override.createdAt.getTime() >= row.createdAt.getTime())) {
    return {
      verdict: override.quarantined ? 'failed' : 'passed',
      quarantined: override.quarantined,
      decidedBy: 'override',
      row,
      override,
    };
  }
  if (row)
    return {
      verdict: row.passed ? 'passed' : 'failed',
      quarantined: !row.passed,
      decidedBy: 'inspector',
      row,
      override,
    };
  return { verdict: 'uninspected', quarantined: false, decidedBy: 'none', row: null, override: null };
}

/** Whether a writer may record rows under `indexerVersion`: the inspector's family is its alone. */
export const isInspectorVersion = (indexerVersion: string): boolean =>
  indexerVersion.startsWith('inspector@');
