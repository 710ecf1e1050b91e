import { systemResources } from '../../../activities/hardening/resources';
import type { AppDeps } from '../../deps';
import { RouteGroup } from '../../http/route-group';

/** The `hardening` group (docs/hardening.md): so far the system's resources. */
export function createHardeningRoutes(deps: AppDeps): RouteGroup {
  return new RouteGroup('hardening').get(
    '/api/system/resources',
    {
      summary:
        "The API host's CPU (cores, load) and memory, the disks of the models, temp and ingest folders, who holds the GPU slot, the auto-label, training, export and corpus jobs queued and running, and each Temporal task queue's workers and backlog (or why Temporal gave none)",
      access: 'admin',
    },
    async () => systemResources({ db: deps.db, config: deps.config, connection: deps.temporal.connection }),
  );
}
