import { z } from 'zod';
import { EmailAddress } from '../../http/email';
import { ROLES } from '../../auth/principal';

export const UserCreateIn = z
  .strictObject({
    email: EmailAddress,
    name: z.string().trim().min(1).max(200),
    /** Long passphrases over complexity rules (NIST SP 800-63B). */
    password: z.string().min(12).max(1024),
    role: z.enum(ROLES).default('annotator'),
  })
  .meta({ description: 'The first user (created without a token) is always an admin.' });
export type UserCreateIn = z.infer<typeof UserCreateIn>;
