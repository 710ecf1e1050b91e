import type { Prisma } from '../../generated/prisma/client';

/**
 * What turns a machine object into a control sample, shared by the control seeding
 * (activities/govern/control-seed) and the per-class precision audit (activities/quality/audit).
 */

/** The fields of an object that its control sample row is made from. */
export const CONTROL_CANDIDATE_SELECT = {
  id: true,
  idemKey: true,
  conf: true,
  jobId: true,
  class: { select: { name: true } },
  frame: { select: { sessionId: true } },
  provenance: { orderBy: { createdAt: 'desc' }, take: 1, select: { reasonerTrace: true } },
} satisfies Prisma.AnnoObjectSelect;

export type ControlCandidate = Prisma.AnnoObjectGetPayload<{ select: typeof CONTROL_CANDIDATE_SELECT }>;

/** Critic checks that ran on an object, from its newest provenance (what its control is counted under). */
export function checksRan(trace: Prisma.JsonValue | null | undefined): string[] {
  const ran = (trace as { critic?: { ran?: unknown } } | null)?.critic?.ran;
  return Array.isArray(ran) ? ran.filter((c): c is string => typeof c === 'string') : [];
}

/** The control sample row of an object drawn under `seed` (note: why it was drawn, if not the seeding). */
export function controlSampleRow(
  o: ControlCandidate,
  seed: number,
  note?: string,
): Prisma.ControlSampleCreateManyInput {
  return {
    objectId: o.id,
    sessionId: o.frame.sessionId,
    seed,
    className: o.class.name,
    conf: o.conf,
    checks: checksRan(o.provenance[0]?.reasonerTrace),
    jobId: o.jobId && /^[0-9a-f-]{36}$/.test(o.jobId) ? o.jobId : null,
    ...(note === undefined ? {} : { note }),
  };
}
