import { z } from 'zod';

export const LoginIn = z.strictObject({
  email: z
    .email()
    .max(320)
    .transform((e) => e.toLowerCase()),
  password: z.string().min(1).max(1024),
});
