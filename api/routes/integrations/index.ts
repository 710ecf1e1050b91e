import { deleteSource, previewSource, registerS3Source } from '../../../activities/sources';
import { createWebhook, deleteWebhook, listWebhooks } from '../../../activities/webhooks/registry';
import { EVENT_CATALOGUE, type EventKindInfo } from '../../../core/events/catalogue';
import { RefusedError } from '../../../core/errors';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../http/actor';
import { RouteGroup, uuidParams } from '../../http/route-group';
import { sourceOut, webhookOut, webhookWithLogOut } from './serialize';
import { IntegrationSourceIn, PreviewQuery, WebhookIn, WebhooksQuery } from './validators';

/**
 * The `integrations` group (docs/webhooks.md, docs/integrations.md): the event catalogue,
 * webhooks with their delivery log, and external buckets to ingest from. Webhooks send platform
 * data out and sources hold credentials, so only admins manage either.
 */
export function createIntegrationsRoutes(deps: AppDeps): RouteGroup {
  const { db } = deps;
  return new RouteGroup('integrations')
    .get(
      '/api/integrations/events',
      {
        summary: 'The catalogue of event kinds: what webhooks subscribe to and what notifies whom',
        access: 'annotator',
      },
      () => ({
        items: (EVENT_CATALOGUE as readonly EventKindInfo[]).map((e) => ({
          kind: e.kind,
          subject: e.subject,
          description: e.description,
          payload: e.payload,
          notifies: e.notifies ?? null,
          emitted_by: e.emittedBy ?? null,
        })),
      }),
    )
    .get(
      '/api/integrations/webhooks',
      {
        summary:
          'Webhooks, oldest first, each with its delivery counts and newest deliveries (the delivery log)',
        access: 'admin',
        query: WebhooksQuery,
        statuses: { 404: 'no webhook webhook_id' },
      },
      async ({ query }) => ({
        items: (
          await listWebhooks(db, {
            webhookId: query.webhook_id,
            deliveries: query.deliveries,
            deliveryStatus: query.delivery_status,
          })
        ).map(webhookWithLogOut),
      }),
    )
    .post(
      '/api/integrations/webhooks',
      {
        summary: 'Register a webhook; its signing secret (whsec_…) is in this answer only',
        access: 'admin',
        body: { name: 'WebhookIn', schema: WebhookIn },
        successStatus: 201,
        statuses: { 422: 'a URL, kind or receiver address refused by name' },
      },
      async ({ body, principal, req }) => {
        const { webhook, secret } = await createWebhook(deps, body, actorOf(principal, req));
        return {
          ...webhookOut(webhook),
          secret,
          signing: {
            scheme: 'Standard Webhooks v1 (HMAC-SHA256)',
            headers: ['webhook-id', 'webhook-timestamp', 'webhook-signature'],
          },
        };
      },
    )
    .delete(
      '/api/integrations/webhooks/{webhook_id}',
      {
        summary: 'Delete a webhook and its delivery log; deliveries under way stop',
        access: 'admin',
        params: uuidParams('webhook_id'),
        statuses: { 404: 'no such webhook' },
      },
      async ({ params, principal, req }) => {
        await deleteWebhook(db, params.webhook_id, actorOf(principal, req));
        return { id: params.webhook_id, deleted: true };
      },
    )
    .get(
      '/api/integrations/sources',
      { summary: 'Registered sources, oldest first (never their secret)', access: 'reviewer' },
      async () => ({
        items: (await db.integrationSource.findMany({ orderBy: { createdAt: 'asc' } })).map(sourceOut),
      }),
    )
    .post(
      '/api/integrations/sources',
      {
        summary:
          'Register an S3-compatible bucket to ingest from, after listing it once; other kinds are refused',
        access: 'admin',
        body: { name: 'IntegrationSourceIn', schema: IntegrationSourceIn },
        successStatus: 201,
        statuses: {
          409: 'a source of that name exists',
          422: 'a kind that is not served, or a bucket that could not be listed with these credentials',
        },
      },
      async ({ body, principal, req }) => {
        if (body.kind !== 's3')
          throw new RefusedError(
            `source kind ${body.kind} is not served: only S3-compatible buckets (kind s3) can be registered (docs/integrations.md)`,
          );
        const { kind: _kind, ...input } = body;
        return sourceOut(await registerS3Source(deps, input, actorOf(principal, req)));
      },
    )
    .delete(
      '/api/integrations/sources/{source_id}',
      {
        summary: 'Forget a source; its bucket and objects are left untouched',
        access: 'admin',
        params: uuidParams('source_id'),
        statuses: { 404: 'no such source' },
      },
      async ({ params, principal, req }) => {
        await deleteSource(db, params.source_id, actorOf(principal, req));
        return { id: params.source_id, deleted: true };
      },
    )
    .get(
      '/api/integrations/sources/{source_id}/preview',
      {
        summary: "The first keys of a source's bucket with sizes and the ingest kind each would be taken as",
        access: 'reviewer',
        params: uuidParams('source_id'),
        query: PreviewQuery,
        statuses: {
          404: 'no such source',
          503: 'the bucket did not answer (unreachable, credentials refused)',
        },
      },
      async ({ params, query }) => previewSource(deps, params.source_id, query.limit),
    );
}
