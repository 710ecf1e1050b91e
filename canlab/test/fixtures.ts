import path from 'node:path';

/** `../shared/fixtures/can` beside the repository checkout (CI clones the repo with shared/ beside it). */
export const CAN_FIXTURES = path.resolve(__dirname, '../../../shared/fixtures/can');

export function fixture(...parts: string[]): string {
  return path.join(CAN_FIXTURES, ...parts);
}
