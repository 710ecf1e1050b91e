/**
 * The timeline: annotate it with marks, list them, rank bytes and bits against the marked
 * intervals, and read live-watch events.
 */
import { z } from 'zod';
import { formatId } from '../../analysis/bits';
import { CanlabInputError } from '../../errors';
import type { Mark } from '../../workspace/types';
import {
  allFrames,
  guarded,
  idArg,
  MAX_LIST,
  MCP_SOURCE,
  parseId,
  requireFrames,
  type ToolFamily,
} from '../common';
import { rankAgainstIntervals, type Interval } from '../rank';
import { watchEvents } from '../watch';

/** Half-width of the window a point mark stands for when ranking, seconds (default). */
export const DEFAULT_POINT_WINDOW_S = 0.5;

/** The intervals marks stand for: an open interval runs to the end of the capture. */
export function markIntervals(marks: readonly Mark[], pointWindowS: number): Interval[] {
  return marks.map((m) =>
    m.kind === 'point' ? [m.start - pointWindowS, m.start + pointWindowS] : [m.start, m.end ?? Infinity],
  );
}

export const timelineTools: ToolFamily = (server, workspace) => {
  server.registerTool(
    'mark',
    {
      title: 'Annotate the timeline',
      description:
        'Applies a mark action (source "mcp"): toggle (default) opens an interval for the label when none is open and closes it otherwise; begin opens, end closes, point marks one instant. Time defaults to the newest frame\'s. The mark appears on the intelligence list and the timeline.',
      inputSchema: z.strictObject({
        label: z.string().min(1).max(200),
        action: z.enum(['toggle', 'begin', 'end', 'point']).default('toggle'),
        at: z.number().optional().describe("Capture time in seconds (default: the newest frame's time)"),
      }),
      annotations: { readOnlyHint: false, destructiveHint: false },
    },
    ({ label, action, at }) => guarded(() => ({ mark: workspace().mark(label, action, MCP_SOURCE, at) })),
  );

  server.registerTool(
    'list_marks',
    {
      title: 'List marks',
      description:
        'Every mark on the timeline (intervals with start and end, open ones without end, points), optionally of one label.',
      inputSchema: z.strictObject({ label: z.string().optional() }),
      annotations: { readOnlyHint: true },
    },
    ({ label }) =>
      guarded(() => ({
        marks: workspace()
          .marks()
          .filter((m) => label === undefined || m.label === label),
      })),
  );

  server.registerTool(
    'rank_bytes',
    {
      title: 'Rank bytes against annotations',
      description:
        'Which bytes and bits behave differently inside the marked intervals than outside. Per byte and bit, over consecutive frame pairs of each id: change z = two-proportion z-score of the change rate inside vs outside; level z (bits) = two-proportion z-score of the share of frames with the bit set. score = max(change z, |level z|), highest first. Point marks stand for ±pointWindowS.',
      inputSchema: z.strictObject({
        label: z.string().optional().describe('Only marks with this label (default: every mark)'),
        id: idArg.optional().describe('Only this id (default: every id)'),
        pointWindowS: z.number().min(0).default(DEFAULT_POINT_WINDOW_S),
        top: z.number().int().min(1).max(1000).default(20).describe('Bytes and bits returned (each)'),
      }),
      annotations: { readOnlyHint: true },
    },
    ({ label, id, pointWindowS, top }) =>
      guarded(() => {
        const ws = workspace();
        requireFrames(ws);
        const marks = ws.marks().filter((m) => label === undefined || m.label === label);
        if (marks.length === 0)
          throw new CanlabInputError(
            'rank_bytes',
            label === undefined
              ? 'there are no marks: annotate the timeline with mark first'
              : `there are no marks labelled '${label}'`,
          );
        const ref = id === undefined ? undefined : parseId(id);
        const result = rankAgainstIntervals(
          allFrames(ws, ref),
          markIntervals(marks, pointWindowS),
          ref ? { ids: new Set([ref.key]) } : {},
        );
        if (result.pairsInside === 0)
          throw new CanlabInputError('rank_bytes', 'no frames fall inside the marked intervals');
        if (result.pairsOutside === 0)
          throw new CanlabInputError(
            'rank_bytes',
            'every frame falls inside the marked intervals: nothing to compare against',
          );
        return {
          marks: marks.length,
          pairsInside: result.pairsInside,
          pairsOutside: result.pairsOutside,
          bytes: result.bytes.slice(0, top),
          bits: result.bits.slice(0, top),
        };
      }),
  );

  server.registerTool(
    'watch_events',
    {
      title: 'Read live-watch events',
      description:
        "Changes of watched ids (a payload differing from the id's previous one) and watched signals (a decoded value differing from the previous one) after a cursor (capture seconds, exclusive), oldest first. Pass the returned cursor back to read what happened since; the watch list is given with each call.",
      inputSchema: z.strictObject({
        ids: z.array(idArg).max(256).default([]),
        signals: z
          .array(z.string().min(1))
          .max(256)
          .default([])
          .describe('Signal names, or "0x123:Name" for one id'),
        cursor: z
          .number()
          .optional()
          .describe('Return events strictly after this capture time (default: from the start)'),
        limit: z.number().int().min(1).max(MAX_LIST).default(200),
      }),
      annotations: { readOnlyHint: true },
    },
    ({ ids, signals, cursor, limit }) =>
      guarded(() => {
        if (ids.length === 0 && signals.length === 0)
          throw new CanlabInputError('watch_events', 'name at least one id or signal to watch');
        const ws = workspace();
        const refs = ids.map(parseId);
        const frames = allFrames(ws);
        const rows =
          signals.length === 0
            ? []
            : ws
                .decode({ n: Number.MAX_SAFE_INTEGER })
                .map((r) => ({ ...r, id: formatId(r.id, r.extended) }));
        const result = watchEvents(
          frames,
          rows,
          {
            ids: new Set(refs.map((r) => r.key)),
            signals,
            ...(cursor === undefined ? {} : { cursor }),
            limit,
          },
          frames[frames.length - 1]?.timestamp,
        );
        return { ...result };
      }),
  );
};
