import type { AppConfig } from '../../core/config';
import { RefusedError } from '../../core/errors';
import type { Db } from '../db';
import { requireCloudProvider } from './provider';
import { findOpenSession } from './sessions';

/**
 * Where a training job runs (docs/cloud.md): `local` jobs queue for the local GPU slot; `cloud`
 * jobs are parked as `queued-cloud` for the connected cloud GPU session (connecting or active), and
 * refused by name when no provider is configured or no session is connected.
 */
export async function placeTrainingJob(
  deps: { db: Db; config: AppConfig },
  computeTarget: 'local' | 'cloud',
): Promise<{ status: 'queued' | 'queued-cloud'; cloudSessionId: string | null }> {
  if (computeTarget === 'local') return { status: 'queued', cloudSessionId: null };
  requireCloudProvider(deps.config.cloud);
  const open = await findOpenSession(deps.db);
  if (!open)
    throw new RefusedError(
      'no cloud GPU session is connected: connect one (POST /api/cloud/connect) or train on the local GPU slot (compute_target local)',
    );
  return { status: 'queued-cloud', cloudSessionId: open.id };
}
