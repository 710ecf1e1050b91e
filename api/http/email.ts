import { z } from 'zod';

/**
 * An e-mail address as sign-in and user creation take it: what zod's `email` format accepts, within
 * RFC 5321's sizes (a local part of at most 64 characters, 254 in all), compared in lower case.
 */
export const EmailAddress = z
  .email()
  .max(254)
  .refine(
    (e) => e.slice(0, e.lastIndexOf('@')).length <= 64,
    'the part before @ must be at most 64 characters',
  )
  .transform((e) => e.toLowerCase());
