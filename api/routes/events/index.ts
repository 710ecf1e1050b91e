import { RouteGroup } from '../../http/route-group';
import type { AppDeps } from '../../deps';
import { serveEventStream } from '../../events/sse';

/** The `events (streams)` group. The token may come as `?token=` here (EventSource cannot set headers). */
export function createEventStreamRoutes(deps: AppDeps): RouteGroup {
  return new RouteGroup('events (streams)')
    .get(
      '/api/events/jobs',
      {
        summary:
          'Server-sent job events with heartbeats: ingest.* (queued, started, progress, completed, failed), upload.* (progress, hashed, failed), autolabel.* (started, progress, completed, failed), control.seed.* (started, progress, completed, failed), agent.run.* (started, progress, completed, failed, reverted, revert_failed)',
        access: 'annotator',
        streamToken: true,
        respondsItself: { contentType: 'text/event-stream' },
      },
      ({ req, res, principal }) => {
        serveEventStream(req, res, {
          hub: deps.events,
          stream: 'jobs',
          heartbeatSeconds: deps.config.events.heartbeatSeconds,
          hello: { user_id: principal.userId },
        });
      },
    )
    .get(
      '/api/events/system',
      {
        summary: 'Server-sent system events, with a heartbeat event every events.heartbeat_seconds',
        access: 'annotator',
        streamToken: true,
        respondsItself: { contentType: 'text/event-stream' },
      },
      ({ req, res, principal }) => {
        serveEventStream(req, res, {
          hub: deps.events,
          stream: 'system',
          heartbeatSeconds: deps.config.events.heartbeatSeconds,
          hello: { user_id: principal.userId },
        });
      },
    );
}
