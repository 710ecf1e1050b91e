import { z } from 'zod';
import { ROLES } from '../../auth/principal';
import { limitParam } from '../../http/session-reads';

/** At most a day: long enough for a deployment to switch tokens, short enough to end soon. */
export const MAX_GRACE_SECONDS = 86_400;

export const ServiceAccountIn = z.strictObject({
  name: z
    .string()
    .regex(/^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/, {
      error: 'lowercase letters, digits and inner hyphens, 1 to 64 characters',
    })
    .meta({ description: 'Unique; also the service user e-mail <name>@service.invalid' }),
  role: z.enum(ROLES).meta({ description: 'The role its token acts with' }),
  description: z.string().trim().max(500).nullable().default(null),
});

export const ServiceAccountRotateIn = z.strictObject({
  grace_seconds: z
    .number()
    .int()
    .min(0)
    .max(MAX_GRACE_SECONDS)
    .default(0)
    .meta({ description: 'How long the replaced token keeps working; 0 (default): it stops at once' }),
});

export const ServiceAccountsQuery = z.strictObject({
  limit: limitParam(50, 200),
  cursor: z.uuid().optional().meta({ description: 'next_cursor of the previous page.' }),
});
