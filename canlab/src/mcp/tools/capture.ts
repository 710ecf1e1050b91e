/** Tools on the capture itself: load it, the workspace status, ids, byte statistics, raw frames. */
import { z } from 'zod';
import { formatRanges, movingBitMap } from '../../analysis/ids';
import { CanlabInputError } from '../../errors';
import {
  allFrames,
  DEFAULT_LIST,
  frameView,
  guarded,
  idArg,
  MAX_LIST,
  parseId,
  requireFrames,
  type ToolFamily,
} from '../common';

const { log2 } = Math;

const limitArg = z.number().int().min(1).max(MAX_LIST);

export const captureTools: ToolFamily = (server, workspace) => {
  server.registerTool(
    'load_capture',
    {
      title: 'Load a capture',
      description:
        'Loads a capture file (candump .log, Vector .asc/.blf, PCAN .trc, GVRET .csv) into the workspace, replacing its frames and marks; defined signals and memory stay. Returns the status.',
      inputSchema: z.strictObject({
        path: z.string().min(1).describe('Path of the capture file on the machine running canlab'),
      }),
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    },
    ({ path }) => guarded(async () => ({ status: await workspace().loadCapture(path) })),
  );

  server.registerTool(
    'status',
    {
      title: 'Workspace status',
      description:
        'Connection state (empty, loaded, recording, stopped), capture source, frame/id/signal/mark counts, open mark labels and the ARM TX state (read only: no tool transmits).',
      inputSchema: z.strictObject({}),
      annotations: { readOnlyHint: true },
    },
    () => guarded(() => ({ status: workspace().status() })),
  );

  server.registerTool(
    'list_ids',
    {
      title: 'List ids',
      description:
        'Every arbitration id with frame count, mean rate, period and jitter, DLCs, and which bytes and bits move.',
      inputSchema: z.strictObject({
        limit: limitArg.optional().describe(`Ids returned at most (default all up to ${MAX_LIST})`),
      }),
      annotations: { readOnlyHint: true },
    },
    ({ limit }) =>
      guarded(() => {
        const stats = workspace().idStats();
        return {
          total: stats.length,
          ids: stats.slice(0, limit ?? MAX_LIST).map((s) => ({
            id: s.key,
            count: s.count,
            rateHz: s.meanRateHz,
            periodMs: s.meanPeriodMs,
            jitterMs: s.jitterMs,
            dlcs: s.dlcs,
            fd: s.fd,
            movingBytes: s.movingBytes,
            movingBits: formatRanges(s.movingBits),
            bitsMovingPerByte: movingBitMap(s),
          })),
        };
      }),
  );

  server.registerTool(
    'byte_stats',
    {
      title: 'Byte statistics of an id',
      description:
        'Per payload byte of one id: changes between consecutive frames, distinct values, min, max, Shannon entropy in bits, and the flip count of each of its bits (bit 0 = least significant).',
      inputSchema: z.strictObject({ id: idArg }),
      annotations: { readOnlyHint: true },
    },
    ({ id }) =>
      guarded(() => {
        const ws = workspace();
        const ref = parseId(id);
        const stats = ws.idStats().find((s) => s.key === ref.key);
        if (!stats) throw new CanlabInputError('id', `${ref.key} does not occur in the workspace's frames`);
        const frames = allFrames(ws, ref).filter((f) => !f.remote && !f.error);
        const bytes = Array.from({ length: stats.maxLength }, (_, i) => {
          const histogram = new Map<number, number>();
          let present = 0;
          for (const f of frames) {
            const v = f.data[i];
            if (v === undefined) continue;
            present++;
            histogram.set(v, (histogram.get(v) ?? 0) + 1);
          }
          let entropy = 0;
          for (const c of histogram.values()) entropy -= (c / present) * log2(c / present);
          const values = [...histogram.keys()];
          return {
            byte: i,
            frames: present,
            changes: stats.byteChanges[i] ?? 0,
            distinct: stats.byteDistinct[i] ?? 0,
            min: values.length ? Math.min(...values) : null,
            max: values.length ? Math.max(...values) : null,
            entropyBits: entropy,
            bitFlips: stats.bitFlips.slice(i * 8, i * 8 + 8),
          };
        });
        return { id: stats.key, frames: stats.count, rateHz: stats.meanRateHz, bytes };
      }),
  );

  server.registerTool(
    'raw_frames',
    {
      title: 'Raw frames',
      description: `The latest frames (oldest first), optionally of one id and inside a time range (capture seconds, inclusive). Default ${DEFAULT_LIST}, at most ${MAX_LIST}.`,
      inputSchema: z.strictObject({
        id: idArg.optional(),
        n: limitArg.optional().describe(`Latest frames returned (default ${DEFAULT_LIST})`),
        from: z.number().optional().describe('Earliest timestamp, seconds'),
        to: z.number().optional().describe('Latest timestamp, seconds'),
      }),
      annotations: { readOnlyHint: true },
    },
    ({ id, n, from, to }) =>
      guarded(() => {
        const ws = workspace();
        requireFrames(ws);
        const ref = id === undefined ? undefined : parseId(id);
        if (from !== undefined && to !== undefined && from > to)
          throw new CanlabInputError('range', `from ${from} is after to ${to}`);
        const count = n ?? DEFAULT_LIST;
        // The API filters by numeric id only; a standard and an extended id with the same number are told apart here.
        const frames = ws.frames({
          n: ref ? Number.MAX_SAFE_INTEGER : count,
          ...(ref ? { id: ref.id } : {}),
          ...(from === undefined ? {} : { from }),
          ...(to === undefined ? {} : { to }),
        });
        const picked = (ref ? frames.filter((f) => f.extended === ref.extended) : frames).slice(-count);
        return { count: picked.length, frames: picked.map(frameView) };
      }),
  );
};
