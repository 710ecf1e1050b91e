/** Structure across frames: ISO-TP transfers, repeated blocks, and calibration against a reference. */
import { z } from 'zod';
import { CanlabInputError } from '../../errors';
import { calibrate, loadReferenceCsv } from '../calibrate';
import { allFrames, guarded, idArg, parseId, requireFrames, type ToolFamily } from '../common';
import { reassembleIsoTp } from '../isotp';
import { findRepeats } from '../repeats';

export const patternTools: ToolFamily = (server, workspace) => {
  server.registerTool(
    'list_isotp_messages',
    {
      title: 'List reassembled multi-frame messages',
      description:
        'ISO 15765-2 (ISO-TP) transfers reassembled per id and channel: single frames, first + consecutive frames (sequence checked), with the flow-control frames sent back. Without an id, only streams whose frames nearly all parse as ISO-TP are listed.',
      inputSchema: z.strictObject({
        id: idArg
          .optional()
          .describe('Only this sender id (listed even when it does not look like ISO-TP throughout)'),
        channel: z.number().int().min(0).optional(),
        includeIncomplete: z
          .boolean()
          .default(true)
          .describe('Also list transfers cut off by a sequence gap or the end of the capture'),
        limit: z
          .number()
          .int()
          .min(1)
          .max(5000)
          .default(100)
          .describe('Transfers returned at most, oldest first'),
      }),
      annotations: { readOnlyHint: true },
    },
    ({ id, channel, includeIncomplete, limit }) =>
      guarded(() => {
        const ws = workspace();
        requireFrames(ws);
        const ref = id === undefined ? undefined : parseId(id);
        // Flow control comes from the peer id, so the whole capture is reassembled and filtered afterwards.
        const streams = reassembleIsoTp(allFrames(ws), { keepAll: ref !== undefined }).filter(
          (s) => (!ref || s.id === ref.key) && (channel === undefined || s.channel === channel),
        );
        const messages = streams
          .flatMap((s) => s.messages)
          .filter((m) => includeIncomplete || m.complete)
          .sort((a, b) => a.start - b.start);
        return {
          streams: streams.map(({ messages: list, ...s }) => ({ ...s, transfers: list.length })),
          total: messages.length,
          messages: messages.slice(0, limit),
        };
      }),
  );

  server.registerTool(
    'find_repeated_blocks',
    {
      title: 'Find repeated blocks',
      description:
        'Per id: a periodic pattern (payloads cycling through a fixed block of P frames, P up to maxPeriod) or, failing that, blocks of at least minLength consecutive payloads that recur (maximal repeats), with the times of each occurrence. Ids with a constant payload are listed as static.',
      inputSchema: z.strictObject({
        id: idArg.optional(),
        minLength: z.number().int().min(2).max(1000).default(3),
        maxPeriod: z.number().int().min(2).max(4096).default(256),
        minPeriodicMatch: z
          .number()
          .min(0.5)
          .max(1)
          .default(0.95)
          .describe('Share of frames that must follow the period'),
        top: z
          .number()
          .int()
          .min(1)
          .max(1000)
          .default(20)
          .describe('Repeated blocks returned, by length × occurrences'),
      }),
      annotations: { readOnlyHint: true },
    },
    ({ id, minLength, maxPeriod, minPeriodicMatch, top }) =>
      guarded(() => {
        const ws = workspace();
        requireFrames(ws);
        const ref = id === undefined ? undefined : parseId(id);
        const result = findRepeats(allFrames(ws, ref), { minLength, maxPeriod, minPeriodicMatch });
        return {
          periodic: result.periodic,
          blocks: result.blocks.slice(0, top),
          totalBlocks: result.blocks.length,
          staticIds: result.staticIds,
        };
      }),
  );

  server.registerTool(
    'calibrate_reference',
    {
      title: 'Calibrate against a reference file',
      description:
        "Given a CSV of timestamp,value of a known quantity on the capture's time base, finds the field (start bit, length, byte order, signedness) and the linear scale and offset that reproduce it best: least squares over every candidate field whose end bits move, ranked by R²; reports RMS and largest error. Feed the best fit to define_signal.",
      inputSchema: z.strictObject({
        referencePath: z.string().min(1).describe('CSV file: timestamp,value per line (header optional)'),
        id: idArg.optional().describe('Only this id (default: every id)'),
        timeOffsetS: z.number().default(0).describe('Added to the reference times to reach capture time'),
        maxGapS: z
          .number()
          .positive()
          .default(1)
          .describe('Largest gap from a reference sample back to the frame paired with it'),
        top: z.number().int().min(1).max(100).default(5),
      }),
      annotations: { readOnlyHint: true },
    },
    ({ referencePath, id, timeOffsetS, maxGapS, top }) =>
      guarded(async () => {
        const ws = workspace();
        requireFrames(ws);
        const ref = id === undefined ? undefined : parseId(id);
        const reference = await loadReferenceCsv(referencePath);
        const fits = calibrate(allFrames(ws, ref), reference, {
          timeOffsetS,
          maxGapS,
          top,
          ...(ref ? { ids: new Set([ref.key]) } : {}),
        });
        if (fits.length === 0)
          throw new CanlabInputError(
            referencePath,
            `no frame lies within ${maxGapS} s before 3 or more reference samples; check timeOffsetS and the time base`,
          );
        return { referenceSamples: reference.length, best: fits[0], fits };
      }),
  );
};
