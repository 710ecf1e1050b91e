import { createHash } from 'node:crypto';
import { z } from 'zod';

/**
 * Train/val/test splits by session (docs/datasets.md): a drive's frames never straddle splits, and
 * a session's split depends only on the seed and its own id, not on which other sessions the
 * export holds. So the same drive lands in the same split in every version of a dataset exported
 * with the same seed, and a later version cannot leak a test drive into training.
 */
export const SPLITS = ['train', 'val', 'test'] as const;
export type Split = (typeof SPLITS)[number];

export const SplitIn = z
  .strictObject({
    seed: z
      .number()
      .int()
      .min(0)
      .max(2 ** 31 - 1)
      .default(12345),
    train: z.number().min(0).max(1).default(0.8),
    val: z.number().min(0).max(1).default(0.1),
    test: z.number().min(0).max(1).default(0.1),
  })
  .refine((s) => Math.abs(s.train + s.val + s.test - 1) < 1e-9, {
    message: 'train + val + test must be 1',
  });
export type SplitSpec = z.infer<typeof SplitIn>;

/** A uniform draw in [0, 1) from SHA-256(seed:session_id). */
export function sessionDraw(seed: number, sessionId: string): number {
  const digest = createHash('sha256').update(`${seed}:${sessionId}`).digest();
  return digest.readUInt32BE(0) / 2 ** 32;
}

export function splitOf(spec: SplitSpec, sessionId: string): Split {
  const u = sessionDraw(spec.seed, sessionId);
  if (u < spec.train) return 'train';
  if (u < spec.train + spec.val) return 'val';
  return 'test';
}
