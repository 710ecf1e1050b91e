import { unreadCount } from '../../../activities/inbox/notifications';
import { findTrainingJob } from '../../../activities/training/jobs';
import { isFinished } from '../../../core/training-jobs/config';
import { RouteGroup, uuidParams } from '../../http/route-group';
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
      '/api/events/notifications',
      {
        summary:
          'Server-sent notifications of the caller as they are committed, from any API process or worker (PostgreSQL LISTEN/NOTIFY): `unread` (the count) after `ready`, then one `notification` event each (the item GET /api/notifications lists); heartbeats between',
        access: 'annotator',
        streamToken: true,
        respondsItself: { contentType: 'text/event-stream' },
      },
      ({ req, res, principal }) => {
        serveEventStream(req, res, {
          hub: deps.events,
          stream: 'notifications',
          heartbeatSeconds: deps.config.events.heartbeatSeconds,
          hello: { user_id: principal.userId },
          accept: (e) => e.data.user_id === principal.userId,
          // Read after subscribing: a notification committed meanwhile is counted and also sent.
          backlog: async () => [
            {
              type: 'unread',
              at: new Date().toISOString(),
              data: { count: await unreadCount(deps.db, principal.userId) },
            },
          ],
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
    )
    .get(
      '/api/events/training/{job_id}',
      {
        summary:
          'Server-sent events of one training job: its persisted curve first (training.epoch, one per epoch done), then live training.epoch and training.status events until the job ends (the final training.status closes the stream); heartbeats between',
        access: 'annotator',
        streamToken: true,
        params: uuidParams('job_id'),
        statuses: { 404: 'no such training job' },
        respondsItself: { contentType: 'text/event-stream' },
      },
      async ({ req, res, params, principal }) => {
        const job = await findTrainingJob(deps.db, params.job_id);
        const sent = new Set<number>();
        const ofJob = (data: Record<string, unknown>) => data.job_id === job.id;
        serveEventStream(req, res, {
          hub: deps.events,
          stream: 'training',
          heartbeatSeconds: deps.config.events.heartbeatSeconds,
          hello: { user_id: principal.userId, job_id: job.id },
          // An epoch the persisted curve already gave is not sent twice.
          accept: (e) => ofJob(e.data) && !(e.type === 'training.epoch' && sent.has(Number(e.data.epoch))),
          endsWith: (e) => e.type === 'training.status' && isFinished(String(e.data.status)),
          backlog: async () => {
            const [now, points] = await Promise.all([
              findTrainingJob(deps.db, job.id),
              deps.db.trainingCurvePoint.findMany({ where: { jobId: job.id }, orderBy: { epoch: 'asc' } }),
            ]);
            const epochs = (now.config as { epochs?: number }).epochs ?? null;
            for (const p of points) sent.add(p.epoch);
            return [
              ...points.map((p) => ({
                type: 'training.epoch',
                at: p.at.toISOString(),
                data: {
                  job_id: job.id,
                  epoch: p.epoch,
                  epochs,
                  train_loss: p.trainLoss,
                  val_loss: p.valLoss,
                  metrics: p.metrics as Record<string, unknown>,
                  persisted: true,
                },
              })),
              {
                type: 'training.status',
                at: new Date().toISOString(),
                data: {
                  job_id: job.id,
                  status: now.status,
                  model_version: now.modelVersion,
                  error: now.error,
                },
              },
            ];
          },
        });
      },
    );
}
