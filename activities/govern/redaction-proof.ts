import { NotFoundError, RefusedError } from '../../core/errors';
import { COVERAGE_L1 } from '../../core/export/gate-report';
import {
  PROOF_RULE,
  proveFrames,
  type FrameEvidence,
  type FrameEvidenceRow,
  type ProofSummary,
} from '../../core/govern/redaction-proof';
import { recordAudit } from '../audit';
import { commitParts, findCommit, readTable } from '../datasets/read';
import type { Db } from '../db';
import { containedRegionSql } from '../export/privacy-gate';
import type { ObjectStore } from '../storage/object-store';

/**
 * The redaction proof of a session or a dataset commit (docs/redaction-proof.md): the evidence of
 * every frame read in one statement, judged by core/govern/redaction-proof.ts, audited with its
 * digest, and listed a page at a time.
 */

/** Frames one proof covers at most: past it, prove session by session. */
export const PROOF_MAX_FRAMES = 200_000;

export type ProofSubject = { kind: 'session'; id: string } | { kind: 'commit'; id: string };

export interface RedactionProof {
  subject: ProofSubject & { sessions: number };
  rule: typeof PROOF_RULE;
  summary: ProofSummary;
  evidence_sha256: string;
  offset: number;
  limit: number;
  next_offset: number | null;
  frames: FrameEvidence[];
  generated_at: string;
}

/** The frames a subject covers: a session's all; a commit's as its frames table lists them, else its sessions'. */
async function subjectFrames(
  deps: { db: Db; storage: ObjectStore },
  subject: ProofSubject,
): Promise<{ sessionIds: string[]; frameIds: string[] | null }> {
  if (subject.kind === 'session') {
    const session = await deps.db.session.findUnique({ where: { id: subject.id }, select: { id: true } });
    if (!session) throw new NotFoundError(`no session ${subject.id}`);
    return { sessionIds: [session.id], frameIds: null };
  }
  const commit = await findCommit(deps.db, subject.id);
  const erased = new Set(commit.erasedSessionIds);
  const sessionIds = commit.sessionIds.filter((id) => !erased.has(id));
  const parts = commitParts(deps.storage, commit, 'frames');
  if (!parts.length) return { sessionIds, frameIds: null };
  const frameIds: string[] = [];
  for await (const batch of readTable(deps.storage, parts, { columns: ['frame_id', 'session_id'] }))
    for (const r of batch) if (!erased.has(r.session_id)) frameIds.push(r.frame_id);
  return { sessionIds, frameIds };
}

export async function redactionProof(
  deps: { db: Db; storage: ObjectStore },
  subject: ProofSubject,
  page: { offset: number; limit: number },
  actor: { userId: string | null; requestId: string | null },
): Promise<RedactionProof> {
  const scope = await subjectFrames(deps, subject);
  const ids = scope.frameIds ?? scope.sessionIds;
  const inScope = (param: number) =>
    scope.frameIds ? `f.id = ANY($${param}::uuid[])` : `f.session_id = ANY($${param}::uuid[])`;
  const count = await deps.db.$queryRawUnsafe<Array<{ n: number }>>(
    `SELECT count(*)::int AS n FROM frames f WHERE ${inScope(1)}`,
    ids,
  );
  if (count[0]!.n > PROOF_MAX_FRAMES)
    throw new RefusedError(
      `${subject.kind} ${subject.id} holds ${count[0]!.n} frames, more than the ${PROOF_MAX_FRAMES} one proof covers; prove its sessions one by one`,
    );
  const contained = containedRegionSql('a.regions', 'o.bbox');
  const subjects = `FROM objects o JOIN ontology_classes c ON c.id = o.class_id
    WHERE o.frame_id = f.id AND c.l1 = ANY($1::text[]) AND o.state <> 'rejected'`;
  const rows = await deps.db.$queryRawUnsafe<FrameEvidenceRow[]>(
    `SELECT f.id::text AS frame_id, f.session_id::text AS session_id, f.index,
            a.id IS NOT NULL AS examined, f.redacted_uri IS NOT NULL AS redacted_copy,
            COALESCE(a.n_faces, 0) AS faces, COALESCE(a.n_plates, 0) AS plates,
            COALESCE(jsonb_array_length(a.regions), 0) AS regions,
            (SELECT count(*)::int ${subjects}) AS subjects,
            COALESCE((SELECT array_agg(o.id::text ORDER BY o.id) ${subjects}
                        AND (a.id IS NULL OR NOT ${contained})), '{}') AS uncovered_object_ids,
            a.model_versions
       FROM frames f LEFT JOIN pii_audits a ON a.frame_id = f.id
      WHERE ${inScope(2)}
      ORDER BY f.session_id, f.index`,
    COVERAGE_L1,
    ids,
  );
  const { frames, summary, evidence_sha256 } = proveFrames(rows);
  const generatedAt = new Date();
  await recordAudit(deps.db, {
    actorId: actor.userId,
    action: 'govern.redaction_proved',
    subjectType: subject.kind === 'session' ? 'session' : 'dataset_commit',
    subjectId: subject.id,
    detail: { summary: { ...summary }, evidence_sha256 },
    requestId: actor.requestId,
  });
  const end = page.offset + page.limit;
  return {
    subject: { ...subject, sessions: scope.sessionIds.length },
    rule: PROOF_RULE,
    summary,
    evidence_sha256,
    offset: page.offset,
    limit: page.limit,
    next_offset: end < frames.length ? end : null,
    frames: frames.slice(page.offset, end),
    generated_at: generatedAt.toISOString(),
  };
}
