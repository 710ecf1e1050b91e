import type { CliRun } from '../command';
import { CanlabInputError } from '../../errors';
import { readCapture } from '../../formats';
import { formatIdsTable, IdStatsAccumulator } from '../../analysis/ids';

/** `canlab ids <capture>`: per-id count, rate, jitter, DLCs, moving bytes and bit flip counts, streamed. */
export const run: CliRun = async ({ positionals, values }, io) => {
  if (positionals.length !== 1)
    throw new CanlabInputError('ids', `expects <capture>, got ${positionals.length} arguments`);
  const acc = new IdStatsAccumulator();
  for await (const frame of readCapture(positionals[0]!)) acc.add(frame);
  const stats = acc.results();
  io.stdout(
    `${acc.totalFrames} frames, ${stats.length} ids${acc.errorFrames ? `, ${acc.errorFrames} error frames` : ''}\n`,
  );
  io.stdout(formatIdsTable(stats, { bitDetail: values.brief !== true }));
  return 0;
};
