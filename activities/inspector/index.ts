import { mapLimit } from '../../core/map-limit';
import { ApplicationFailure } from '@temporalio/activity';
import sharp from 'sharp';
import {
  exposureFromLuma,
  INSPECTOR_VERSION,
  scoreSessionHealth,
  spreadSample,
  type ExposureStats,
} from '../../core/health';
import type { Prisma } from '../../generated/prisma/client';
import { recordAudit } from '../audit';
import type { Db } from '../db';
import type { ObjectStore } from '../storage/object-store';
import type { AppConfig } from '../../core/config';
import { applyGate, lockSession } from './gate-store';
import { isMissingObject, objectLocation, readObject } from './frame-objects';

export interface InspectorDeps {
  config: AppConfig;
  db: Db;
  storage: ObjectStore;
}

/** Longest side frames are shrunk to before measuring exposure: a mean needs no full resolution. */
const EXPOSURE_WIDTH = 320;
const FETCH_CONCURRENCY = 4;

/** Exposure stats ingest recorded in `frames.context.exposure` (docs/session-health.md). */
function recordedExposure(context: Prisma.JsonValue): ExposureStats | null {
  const e = (
    context as { exposure?: { mean_luma?: unknown; clipped_dark?: unknown; clipped_bright?: unknown } } | null
  )?.exposure;
  if (!e || typeof e.mean_luma !== 'number') return null;
  return {
    meanLuma: e.mean_luma,
    clippedDark: typeof e.clipped_dark === 'number' ? e.clipped_dark : 0,
    clippedBright: typeof e.clipped_bright === 'number' ? e.clipped_bright : 0,
  };
}

async function measureStoredExposure(storage: ObjectStore, uri: string): Promise<ExposureStats | null> {
  let bytes: Buffer;
  try {
    bytes = await readObject(storage, objectLocation(storage, uri, 'frames'));
  } catch (err) {
    if (isMissingObject(err)) return null;
    throw err;
  }
  try {
    const luma = await sharp(bytes)
      .removeAlpha()
      .greyscale()
      .resize({ width: EXPOSURE_WIDTH, withoutEnlargement: true })
      .raw()
      .toBuffer();
    return exposureFromLuma(luma);
  } catch {
    return null; // not a decodable image: counted as unreadable, never as well exposed
  }
}

export function createInspectorActivities({ config, db, storage }: InspectorDeps) {
  /** Per-frame stats where ingest recorded them; otherwise a spread sample decoded from storage. */
  async function sessionExposure(frames: Array<{ uri: string; context: Prisma.JsonValue }>) {
    const recorded = frames.map((f) => recordedExposure(f.context));
    if (frames.length > 0 && recorded.every((e) => e !== null)) {
      return { stats: recorded as ExposureStats[], source: 'ingest' as const, unreadable: 0 };
    }
    const sample = spreadSample(frames.length, config.health.exposureSample).map((i) => frames[i]!);
    const measured = await mapLimit(
      sample,
      FETCH_CONCURRENCY,
      async (f) => recordedExposure(f.context) ?? (await measureStoredExposure(storage, f.uri)),
    );
    const stats = measured.filter((e): e is ExposureStats => e !== null);
    return { stats, source: 'storage' as const, unreadable: measured.length - stats.length };
  }

  return {
    /**
     * Scores one session's health, writes a session_health row tagged with the inspector's
     * indexer_version and quarantines or releases the session by the gate. The ingest workflow
     * calls it as its last step; sessionHealthWorkflow and the sweep call it on demand.
     */
    async inspectSessionHealth(sessionId: string): Promise<{ passed: boolean; score: number }> {
      const session = await db.session.findUnique({ where: { id: sessionId } });
      if (!session) throw ApplicationFailure.nonRetryable(`no session ${sessionId}`, 'SessionNotFound');
      const frames = await db.frame.findMany({
        where: { sessionId },
        orderBy: { index: 'asc' },
        select: { timestampMs: true, uri: true, context: true },
      });
      const exposure = await sessionExposure(frames);
      const report = scoreSessionHealth(
        {
          targetFps: session.targetFps ?? config.ingest.targetFps,
          timestampsMs: frames.map((f) => f.timestampMs),
          duplicateCount: session.duplicateCount,
          rejectedCount: session.rejectedCount,
          exposure: exposure.stats,
          expectedSensors: session.expectedSensors,
          presentSensors: session.presentSensors,
        },
        config.health,
      );
      report.checks.exposure = {
        ...report.checks.exposure,
        source: exposure.source,
        unreadable: exposure.unreadable,
      };

      await db.$transaction(async (tx) => {
        if (!(await lockSession(tx, sessionId)))
          throw ApplicationFailure.nonRetryable(
            `session ${sessionId} was deleted during inspection`,
            'SessionNotFound',
          );
        const row = await tx.sessionHealth.create({
          data: {
            sessionId,
            indexerVersion: INSPECTOR_VERSION,
            passed: report.passed,
            score: report.score,
            checks: report.checks as unknown as Prisma.InputJsonValue,
          },
        });
        await recordAudit(tx, {
          actorId: null,
          action: 'session.health.inspected',
          subjectType: 'session',
          subjectId: sessionId,
          detail: {
            health_row_id: row.id,
            indexer_version: INSPECTOR_VERSION,
            passed: report.passed,
            score: report.score,
          },
        });
        await applyGate(tx, sessionId, { actorId: null });
      });
      return { passed: report.passed, score: report.score };
    },

    /** One page of session ids in id order, for the health sweep. */
    async listSessionIdsForSweep(after: string | null, limit: number): Promise<string[]> {
      const rows = await db.session.findMany({
        where: after ? { id: { gt: after } } : {},
        orderBy: { id: 'asc' },
        take: limit,
        select: { id: true },
      });
      return rows.map((r) => r.id);
    },
  };
}

export type InspectorActivities = ReturnType<typeof createInspectorActivities>;
