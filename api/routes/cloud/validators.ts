import { z } from 'zod';

/** Bodies of the cloud session routes (docs/cloud.md). */

export const ConnectIn = z.strictObject({
  ack_hourly_usd: z.number().nonnegative().max(1_000_000).meta({
    description:
      'the hourly price in USD the caller accepts; the provider’s quote must not exceed it (GET /api/cloud/status shows the last price)',
  }),
});
