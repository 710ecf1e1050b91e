import { DEFAULT_EXPORT_PREDICATE, SlicePredicate } from '../../core/curation/slice';
import { NotFoundError, RefusedError } from '../../core/errors';
import type { GateReport } from '../../core/export/gate-report';
import type { SplitSpec } from '../../core/export/splits';
import { blockedSentence } from '../../core/govern/consent';
import type { AppConfig } from '../../core/config';
import type { Prisma } from '../../generated/prisma/client';
import { recordAudit } from '../audit';
import { checkPredicate } from '../curation/slice-query';
import type { Db } from '../db';
import { excludeBlockedSessions } from '../govern/consent';
import { assertWorkMayStart } from '../govern/start-guard';
import type { ExportFormat } from './index';
import { sliceIsEmpty } from './pages';
import { evaluatePrivacyGate } from './privacy-gate';
import { prismaSql } from './sql';

/** What an export is asked (the API's ExportIn once parsed; a campaign asks the same). */
export interface ExportRequest {
  name: string;
  slice_id: string | null;
  predicate: SlicePredicate | null;
  formats: ExportFormat[];
  yolo_task: 'detect' | 'segment';
  include_images: boolean;
  split: SplitSpec;
}

async function resolvePredicate(db: Db, request: ExportRequest): Promise<SlicePredicate> {
  if (!request.slice_id) return request.predicate ?? DEFAULT_EXPORT_PREDICATE;
  const slice = await db.slice.findUnique({ where: { id: request.slice_id } });
  if (!slice) throw new NotFoundError(`no slice ${request.slice_id}`);
  return SlicePredicate.parse(slice.predicate);
}

/** A refusal names each blocking session, and per session the frames and objects that lack coverage. */
function gateRefusal(gate: GateReport): RefusedError {
  const sessions = gate.blocking_sessions.map((s) => `${s.name} (${s.session_id})`).join(', ');
  return new RefusedError(
    `the privacy gate (enforcing) refused the export: ${gate.frames_without_audit} frame(s) without a PII audit and ${gate.uncovered_objects} person/vehicle object(s) without a contained redaction, in ${gate.blocking_sessions.length} session(s): ${sessions}`,
    {
      gate_mode: gate.mode,
      frames_without_audit: gate.frames_without_audit,
      uncovered_objects: gate.uncovered_objects,
      blocking_sessions: gate.blocking_sessions,
    },
  );
}

/**
 * Checks an export request and records its job (queued, no workflow yet): the selection, the
 * sessions consent blocks, an empty slice and — in enforcing mode — the privacy gate refuse here,
 * audited, before anything is written. Every way an export starts (the API's two start routes, a
 * campaign's iteration) goes through it.
 */
export async function queueExportJob(
  deps: { db: Db; config: AppConfig },
  request: ExportRequest,
  actor: { userId: string | null; requestId?: string | undefined },
) {
  const { db, config } = deps;
  await assertWorkMayStart(db, 'export');
  const predicate = await resolvePredicate(db, request);
  await checkPredicate(db, predicate, request.slice_id ? 'slice.predicate' : 'body.predicate');
  const mode = config.pii.coverageGate;
  // The checks see what the export will: the slice without the sessions consent blocks (the
  // export leaves them out again when it starts, as consent then stands).
  const consent = await excludeBlockedSessions(prismaSql(db), config.consent, predicate);
  if (await sliceIsEmpty(prismaSql(db), consent.predicate))
    throw new RefusedError(
      consent.excluded.length
        ? `the slice selects no objects to export once ${blockedSentence('export', consent.excluded)}`
        : 'the slice selects no objects to export',
      consent.excluded.length ? { consent_excluded: consent.excluded } : undefined,
    );
  // Only an enforcing gate can refuse, so only it runs here (and again when the export starts); an
  // advisory or disabled gate runs once, in the workflow, and its report is on the job.
  const gate =
    mode === 'enforcing' ? await evaluatePrivacyGate(prismaSql(db), consent.predicate, mode) : null;
  if (gate?.outcome === 'refused') {
    await recordAudit(db, {
      actorId: actor.userId,
      action: 'export.refused',
      subjectType: 'export',
      detail: {
        name: request.name,
        frames_without_audit: gate.frames_without_audit,
        uncovered_objects: gate.uncovered_objects,
        sessions: gate.blocking_sessions.map((s) => s.session_id),
      },
      requestId: actor.requestId,
    });
    throw gateRefusal(gate);
  }
  const json = (v: unknown) => v as Prisma.InputJsonValue;
  const job = await db.exportJob.create({
    data: {
      name: request.name,
      sliceId: request.slice_id,
      predicate: json(predicate),
      formats: request.formats,
      includeImages: request.include_images,
      split: json({ ...request.split, yolo_task: request.yolo_task }),
      gateMode: mode,
      gate: json(gate ?? { mode, outcome: 'pending' }),
      createdBy: actor.userId,
    },
  });
  return { job, gate, consent };
}
