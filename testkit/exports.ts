import type { AppDeps } from '../api/deps';
import type { TestApi } from './api';
import { createSessionFixture } from './session-fixtures';

/**
 * The smallest real export, for suites that need an export job rather than test exports
 * themselves (jobs, webhooks): a session whose every frame is redacted and PII-audited with one
 * accepted car on it, exported through `POST /api/export` as a reviewer starts one.
 */
export async function createExportableSession(
  deps: Pick<AppDeps, 'db' | 'storage'>,
  frames: number,
): Promise<{ sessionId: string }> {
  const { db } = deps;
  const car = await db.ontologyClass.findUniqueOrThrow({ where: { name: 'car' } });
  const fixture = await createSessionFixture(deps, { frames, redacted: true });
  for (const f of fixture.frames) {
    await db.piiAudit.create({ data: { frameId: f.id, nFaces: 0, regions: [] } });
    await db.annoObject.create({
      data: { frameId: f.id, classId: car.id, bbox: [1, 1, 20, 20], source: 'human', state: 'accepted' },
    });
  }
  return { sessionId: fixture.session.id };
}

/** Starts an export of the session's accepted objects as COCO; the 202's job and workflow ids. */
export async function startSessionExport(
  api: TestApi,
  token: string,
  sessionId: string,
  name: string,
): Promise<{ job_id: string; workflow_id: string }> {
  const res = await api.call('POST', '/api/export', {
    token,
    body: { name, formats: ['coco'], predicate: { states: ['accepted'], session_ids: [sessionId] } },
  });
  if (res.status !== 202) throw new Error(`export: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { job_id: string; workflow_id: string };
}
