/**
 * The signal list: list, define, remove, undo, and decode with it. Defines and removes go through
 * the workspace as steps with source `mcp`, so in the window each shows up in the signal builder as
 * one undoable step; `undo` takes back only the assistant's own newest step.
 */
import { z } from 'zod';
import { formatId } from '../../analysis/bits';
import type { DbcSignal } from '../../dbc/model';
import { CanlabInputError } from '../../errors';
import type { SignalDefinition, SignalStep } from '../../workspace/types';
import { newSignal } from '../../workspace/workspace';
import {
  DEFAULT_LIST,
  guarded,
  idArg,
  MAX_LIST,
  MCP_SOURCE,
  parseId,
  requireFrames,
  type ToolFamily,
} from '../common';

export function signalView(d: SignalDefinition): Record<string, unknown> {
  const { valueTable, ...signal } = d.signal;
  return {
    id: formatId(d.messageId, d.extended),
    ...signal,
    ...(valueTable ? { valueTable: Object.fromEntries(valueTable) } : {}),
  };
}

function stepView(step: SignalStep): Record<string, unknown> {
  return { kind: step.kind, source: step.source, at: step.at, signal: signalView(step.definition) };
}

/** Physical range of the raw range, used when the caller gives no minimum or maximum. */
function physicalRange(length: number, signed: boolean, factor: number, offset: number): [number, number] {
  const lo = signed ? -(2 ** (length - 1)) : 0;
  const hi = signed ? 2 ** (length - 1) - 1 : 2 ** length - 1;
  // 12 significant digits drop binary noise (2047 * 0.1 = 204.70000000000002) that a DBC would carry.
  const a = Number((lo * factor + offset).toPrecision(12));
  const b = Number((hi * factor + offset).toPrecision(12));
  return a <= b ? [a, b] : [b, a];
}

function valueTableOf(entries: Record<string, string>): Map<number, string> {
  const table = new Map<number, string>();
  for (const [key, label] of Object.entries(entries)) {
    const raw = Number(key);
    if (!Number.isInteger(raw))
      throw new CanlabInputError('valueTable', `key "${key}" is not an integer raw value`);
    table.set(raw, label);
  }
  return table;
}

export const signalTools: ToolFamily = (server, workspace) => {
  server.registerTool(
    'list_signals',
    {
      title: 'List defined signals',
      description:
        'The signals defined in the workspace (by the analyst in the window or by a tool), with id, bits, byte order, signedness, scale, offset, unit and value table.',
      inputSchema: z.strictObject({}),
      annotations: { readOnlyHint: true },
    },
    () => guarded(() => ({ signals: workspace().signals().map(signalView) })),
  );

  server.registerTool(
    'define_signal',
    {
      title: 'Define a signal',
      description:
        'Adds a signal (or replaces the one with the same name on the id) as one undoable step, source "mcp"; it appears in the window\'s signal builder. Start bit in DBC numbering: LSB for little_endian (Intel), MSB for big_endian (Motorola).',
      inputSchema: z.strictObject({
        id: idArg,
        name: z.string().describe('DBC identifier: letters, digits, underscore'),
        startBit: z.number().int().min(0).max(511),
        length: z.number().int().min(1).max(64),
        byteOrder: z
          .enum(['little_endian', 'big_endian'])
          .default('little_endian')
          .describe('little_endian = Intel, big_endian = Motorola'),
        signed: z.boolean().default(false),
        factor: z.number().default(1),
        offset: z.number().default(0),
        minimum: z
          .number()
          .optional()
          .describe('Physical minimum (default: from the raw range, factor and offset)'),
        maximum: z
          .number()
          .optional()
          .describe('Physical maximum (default: from the raw range, factor and offset)'),
        unit: z.string().default(''),
        valueType: z.enum(['integer', 'float32', 'float64']).default('integer'),
        valueTable: z
          .record(z.string(), z.string())
          .optional()
          .describe('Raw value → label, e.g. {"0": "Off", "1": "On"}'),
        isMultiplexer: z.boolean().default(false).describe('This signal is the multiplexer selector'),
        multiplexerValue: z
          .number()
          .int()
          .min(0)
          .optional()
          .describe('Selector value under which this signal is present'),
        comment: z.string().optional(),
      }),
      annotations: { readOnlyHint: false, destructiveHint: false },
    },
    (args) =>
      guarded(() => {
        const ref = parseId(args.id);
        const [min, max] = physicalRange(args.length, args.signed, args.factor, args.offset);
        const fields: Pick<DbcSignal, 'name' | 'startBit' | 'length'> & Partial<DbcSignal> = {
          name: args.name,
          startBit: args.startBit,
          length: args.length,
          byteOrder: args.byteOrder,
          signed: args.signed,
          valueType: args.valueType,
          factor: args.factor,
          offset: args.offset,
          minimum: args.minimum ?? min,
          maximum: args.maximum ?? max,
          unit: args.unit,
          isMultiplexer: args.isMultiplexer,
          ...(args.multiplexerValue === undefined ? {} : { multiplexerValue: args.multiplexerValue }),
          ...(args.valueTable ? { valueTable: valueTableOf(args.valueTable) } : {}),
          ...(args.comment === undefined ? {} : { comment: args.comment }),
        };
        const step = workspace().defineSignal(
          { messageId: ref.id, extended: ref.extended, signal: newSignal(fields) },
          MCP_SOURCE,
        );
        return { step: stepView(step) };
      }),
  );

  server.registerTool(
    'remove_signal',
    {
      title: 'Remove a signal',
      description: 'Removes a defined signal by id and name as one undoable step, source "mcp".',
      inputSchema: z.strictObject({ id: idArg, name: z.string().min(1) }),
      annotations: { readOnlyHint: false, destructiveHint: true },
    },
    ({ id, name }) =>
      guarded(() => {
        const ref = parseId(id);
        const ws = workspace();
        if (
          !ws
            .signals()
            .some((d) => d.messageId === ref.id && d.extended === ref.extended && d.signal.name === name)
        )
          throw new CanlabInputError(
            `signal ${name}`,
            `no signal ${name} is defined on ${ref.key}; list_signals shows the defined ones`,
          );
        return { step: stepView(ws.removeSignal(ref.id, name, MCP_SOURCE)) };
      }),
  );

  server.registerTool(
    'undo',
    {
      title: "Undo the assistant's last signal step",
      description:
        'Takes back the newest step on the signal list when a tool made it (source "mcp"). A step the analyst made in the window is never undone from here: the tool refuses and names it.',
      inputSchema: z.strictObject({}),
      annotations: { readOnlyHint: false, destructiveHint: true },
    },
    () =>
      guarded(() => {
        const ws = workspace();
        const newest = ws.history().undo.at(-1);
        if (!newest) throw new CanlabInputError('undo', 'nothing to undo: the signal list has no steps');
        if (newest.source !== MCP_SOURCE)
          throw new CanlabInputError(
            'undo',
            `the newest step (${newest.kind} ${newest.definition.signal.name}) was made by ${newest.source}, not by a tool; only the assistant's own steps are undone here`,
          );
        const undone = ws.undo();
        if (!undone) throw new CanlabInputError('undo', 'nothing to undo');
        return { undone: stepView(undone), signals: ws.signals().length };
      }),
  );

  server.registerTool(
    'decode_frames',
    {
      title: 'Decode frames',
      description: `Decodes the latest frames that defined signals cover (oldest first): physical value, raw value, unit and value-table label per signal. Default ${DEFAULT_LIST} frames, at most ${MAX_LIST}.`,
      inputSchema: z.strictObject({
        id: idArg.optional(),
        n: z.number().int().min(1).max(MAX_LIST).optional(),
        from: z.number().optional(),
        to: z.number().optional(),
      }),
      annotations: { readOnlyHint: true },
    },
    ({ id, n, from, to }) =>
      guarded(() => {
        const ws = workspace();
        requireFrames(ws);
        if (ws.signals().length === 0)
          throw new CanlabInputError('decode', 'no signals are defined yet: define one with define_signal');
        const ref = id === undefined ? undefined : parseId(id);
        const count = n ?? DEFAULT_LIST;
        const rows = ws.decode({
          n: ref ? Number.MAX_SAFE_INTEGER : count,
          ...(ref ? { id: ref.id } : {}),
          ...(from === undefined ? {} : { from }),
          ...(to === undefined ? {} : { to }),
        });
        const picked = rows.filter((r) => !ref || r.extended === ref.extended).slice(-count);
        return {
          count: picked.length,
          frames: picked.map((r) => ({
            timestamp: r.timestamp,
            id: formatId(r.id, r.extended),
            signals: r.signals,
          })),
        };
      }),
  );
};
