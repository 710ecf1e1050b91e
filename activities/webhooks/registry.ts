import { randomBytes } from 'node:crypto';
import type { AppConfig } from '../../core/config';
import { NotFoundError, RefusedError } from '../../core/errors';
import { sealSecret } from '../../core/sealed';
import { isDeliveryStatus, type DeliveryStatus } from '../../core/webhooks/delivery';
import { privateTargetsAllowed } from '../../core/webhooks/targets';
import type { Webhook, WebhookDelivery } from '../../generated/prisma/client';
import { recordAudit } from '../audit';
import type { Db } from '../db';
import { checkTarget, TargetRefusedError } from './send';

/** Webhook registrations as the integrations routes make, list and delete them (docs/webhooks.md). */

interface Deps {
  db: Db;
  config: Pick<AppConfig, 'env' | 'auth' | 'webhooks'>;
}

type Actor = { userId: string; requestId: string };

/**
 * A signing secret as the Standard Webhooks spec writes it: `whsec_` and the base64 of 32 random
 * bytes (the spec asks for 24 to 64).
 */
const newSigningSecret = (): string => `whsec_${randomBytes(32).toString('base64')}`;

/**
 * Registers a webhook for its owner, after checking its receiver's address against the target
 * rules. The signing secret is returned here, to be shown once; the row keeps it sealed.
 */
export async function createWebhook(
  deps: Deps,
  input: { url: string; kinds: string[]; description: string | null },
  actor: Actor,
): Promise<{ webhook: Webhook; secret: string }> {
  try {
    await checkTarget(new URL(input.url), privateTargetsAllowed(deps.config));
  } catch (err) {
    if (err instanceof TargetRefusedError) throw new RefusedError(`receiver refused: ${err.message}`);
    throw err;
  }
  const secret = newSigningSecret();
  const webhook = await deps.db.$transaction(async (tx) => {
    const created = await tx.webhook.create({
      data: {
        ownerId: actor.userId,
        url: input.url,
        kinds: input.kinds,
        description: input.description,
        secretCipher: sealSecret(deps.config.auth.sealingKey, secret),
      },
    });
    await recordAudit(tx, {
      actorId: actor.userId,
      action: 'webhook.created',
      subjectType: 'webhook',
      subjectId: created.id,
      detail: { url: created.url, kinds: created.kinds },
      requestId: actor.requestId,
    });
    return created;
  });
  return { webhook, secret };
}

export type WebhookWithLog = Webhook & {
  deliveries: WebhookDelivery[];
  counts: Record<DeliveryStatus, number>;
};

/** Webhooks, oldest first, each with its newest deliveries and its delivery counts by state. */
export async function listWebhooks(
  db: Db,
  q: { webhookId?: string; deliveries: number; deliveryStatus?: DeliveryStatus },
): Promise<WebhookWithLog[]> {
  const hooks = await db.webhook.findMany({
    where: q.webhookId ? { id: q.webhookId } : {},
    orderBy: { createdAt: 'asc' },
    include: {
      deliveries: {
        where: q.deliveryStatus ? { status: q.deliveryStatus } : {},
        orderBy: { createdAt: 'desc' },
        take: q.deliveries,
      },
    },
  });
  if (q.webhookId && !hooks.length) throw new NotFoundError(`no webhook ${q.webhookId}`);
  const counted = await db.webhookDelivery.groupBy({
    by: ['webhookId', 'status'],
    where: { webhookId: { in: hooks.map((h) => h.id) } },
    _count: { _all: true },
  });
  return hooks.map((h) => {
    const counts: Record<DeliveryStatus, number> = { pending: 0, delivered: 0, failed: 0, abandoned: 0 };
    for (const c of counted)
      if (c.webhookId === h.id && isDeliveryStatus(c.status)) counts[c.status] = c._count._all;
    return { ...h, counts };
  });
}

/** Deletes a webhook and its delivery log; a delivery under way finds it gone and ends. */
export async function deleteWebhook(db: Db, id: string, actor: Actor): Promise<void> {
  await db.$transaction(async (tx) => {
    const gone = await tx.webhook.deleteMany({ where: { id } });
    if (gone.count === 0) throw new NotFoundError(`no webhook ${id}`);
    await recordAudit(tx, {
      actorId: actor.userId,
      action: 'webhook.deleted',
      subjectType: 'webhook',
      subjectId: id,
      requestId: actor.requestId,
    });
  });
}
