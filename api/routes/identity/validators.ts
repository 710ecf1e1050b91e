import { z } from 'zod';
import { EmailAddress } from '../../http/email';

export const LoginIn = z.strictObject({
  email: EmailAddress,
  password: z.string().min(1).max(1024),
});
