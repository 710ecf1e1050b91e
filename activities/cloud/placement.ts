import type { AppConfig } from '../../core/config';
import type { Db } from '../db';

/**
 * Where a training job runs (docs/cloud.md): `local` jobs queue for the local GPU slot; `cloud`
 * jobs are parked as `queued-cloud` for the connected cloud GPU session, and refused by name when
 * no provider is configured or no session is connected. (Stub: being built for issue 15.)
 */
export async function placeTrainingJob(
  deps: { db: Db; config: AppConfig },
  computeTarget: 'local' | 'cloud',
): Promise<{ status: 'queued' | 'queued-cloud'; cloudSessionId: string | null }> {
  void deps;
  return Promise.resolve({ status: 'queued', cloudSessionId: computeTarget === 'cloud' ? null : null });
}
