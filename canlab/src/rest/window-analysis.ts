/**
 * The window's analysis routes (private `/ui/` API, docs/window-and-rest.md): a DBC sent by the
 * page joins the signal list, decoded time series feed the plot, and the bit-change heatmap shows
 * what moves in an id. Series and heatmaps scan the whole capture, so they are cached until the
 * frames change (series of defined signals also until the signal list changes).
 */
import path from 'node:path';
import { fieldBits, type FieldRef } from '../analysis/bits';
import { messageKey, signalEndByte } from '../dbc/codec';
import type { DbcMessage } from '../dbc/model';
import { decodeDbcBytes, parseDbc } from '../dbc/parse';
import type { IntelligenceItem, WorkspaceApi } from '../workspace/types';
import { hexId } from '../workspace/workspace';
import {
  badField,
  booleanField,
  canIdField,
  definitionFromBody,
  integerField,
  numberField,
  queryFields,
  stringField,
  type JsonObject,
} from './fields';
import { bitHeatmap, type BitHeatmap } from './heatmap';
import { decimate, decodeSeries, type Series } from './plot';
import type { Route } from './route';

/** A DBC the page sends may be far larger than the 64 KiB of other bodies (opendbc's reach 1 MB). */
export const MAX_DBC_BYTES = 16 * 1024 * 1024;
export const DEFAULT_PLOT_COLUMNS = 1000;
export const MAX_PLOT_COLUMNS = 10_000;
/** Samples kept in the series cache in all (16 bytes each): about 64 MB at most. */
const SERIES_CACHE_SAMPLES = 4_000_000;
/** Heatmaps kept (a few kB each). */
const HEATMAP_CACHE_ENTRIES = 256;

/** What the last DBC loads gave the signal list. */
export interface DbcSummary {
  /** The file name of the latest load. */
  file: string;
  messages: number;
  signals: number;
  /** Signals the workspace refused (an id out of range, a signal past 64 bytes...), with its reason. */
  skipped: Array<{ message: string; signal: string; reason: string }>;
  /** DBC message names by id (`0x217` → `TRACK_A_7`), of every DBC loaded in this session. */
  messageNames: Record<string, string>;
}

/** Least recently used entries leave first once the summed sizes pass `capacity`. */
class Cache<T> {
  private readonly entries = new Map<string, { value: T; size: number }>();
  private total = 0;

  constructor(
    private readonly capacity: number,
    private readonly sizeOf: (value: T) => number,
  ) {}

  get(key: string, compute: () => T): T {
    const hit = this.entries.get(key);
    if (hit) {
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit.value;
    }
    const value = compute();
    const size = this.sizeOf(value);
    this.entries.set(key, { value, size });
    this.total += size;
    for (const [k, e] of this.entries) {
      if (this.total <= this.capacity || k === key) break;
      this.entries.delete(k);
      this.total -= e.size;
    }
    return value;
  }

  /** Drops every entry, or those whose key starts with `prefix`. */
  clear(prefix = ''): void {
    for (const [k, e] of this.entries)
      if (k.startsWith(prefix)) {
        this.entries.delete(k);
        this.total -= e.size;
      }
  }
}

const SERIES_QUERY = {
  numbers: ['from', 'to', 'width', 'startBit', 'length', 'factor', 'offset'],
  booleans: ['extended', 'signed'],
} as const;

/** The bits a finding claims, when its detail names a field (every detector candidate does). */
function claimedField(detail: Record<string, unknown>): FieldRef | undefined {
  const f = detail.field as Partial<FieldRef> | undefined;
  if (typeof f !== 'object' || f === null) return undefined;
  const { startBit, length, byteOrder } = f;
  if (typeof startBit !== 'number' || typeof length !== 'number') return undefined;
  if (byteOrder !== 'little_endian' && byteOrder !== 'big_endian') return undefined;
  return { startBit, length, byteOrder };
}

/** An intelligence item with `bits`, the DBC bit indices its finding claims (LSB first), for the heatmap. */
export function withClaimedBits(item: IntelligenceItem): IntelligenceItem & { bits?: number[] } {
  const field = item.kind === 'finding' ? claimedField(item.detail) : undefined;
  return field ? { ...item, bits: fieldBits(field) } : item;
}

function messageOf(query: JsonObject): { id: number; extended: boolean } {
  const id = canIdField(query, 'messageId');
  const extended = booleanField(query, 'extended', id > 0x7ff);
  if (!extended && id > 0x7ff)
    throw badField('messageId', 'a standard id is at most 0x7FF (set extended=true for a 29-bit id)');
  return { id, extended };
}

export interface WindowAnalysis {
  routes: Route[];
  dbc(): DbcSummary | null;
  /** Stops following the workspace's events. */
  close(): void;
}

export function windowAnalysis(ws: WorkspaceApi): WindowAnalysis {
  const series = new Cache<Series>(SERIES_CACHE_SAMPLES, (s) => s.t.length);
  const heatmaps = new Cache<BitHeatmap>(HEATMAP_CACHE_ENTRIES, () => 1);
  let summary: DbcSummary | null = null;
  const off = ws.on((event) => {
    if (event.type === 'frames' || event.type === 'loaded') {
      series.clear();
      heatmaps.clear();
    } else if (event.type === 'signals') series.clear('defined/');
  });

  /** A defined signal's series, decoded with every signal defined on its id (multiplexing needs them). */
  const definedSeries = (id: number, extended: boolean, name: string): { series: Series; unit: string } => {
    const db = ws.signalDatabase();
    const message = db.messages.find((m) => m.id === id && m.extended === extended);
    const signal = message?.signals.find((s) => s.name === name);
    if (!message || !signal)
      throw badField('name', `no signal ${name} is defined on message ${hexId(id, extended)}`);
    const key = `defined/${messageKey(id, extended)}/${name}`;
    return {
      series: series.get(key, () => decodeSeries(ws.allFrames(), { ...db, messages: [message] }, name)),
      unit: signal.unit,
    };
  };

  /** A field the analyst has not defined (a detector candidate): decoded through the same codec. */
  const candidateSeries = (query: JsonObject): { series: Series; unit: string } => {
    const { messageId, extended, signal } = definitionFromBody({ ...query, name: 'candidate' });
    if (signalEndByte(signal) > 64)
      throw badField(
        'startBit',
        `start bit ${signal.startBit} with length ${signal.length} runs past byte 64`,
      );
    const message: DbcMessage = {
      id: messageId,
      extended,
      name: 'CANDIDATE',
      length: signalEndByte(signal),
      sender: 'Vector__XXX',
      signals: [signal],
      attributes: {},
    };
    const key = `candidate/${messageKey(messageId, extended)}/${signal.startBit}/${signal.length}/${signal.byteOrder}/${signal.signed}/${signal.factor}/${signal.offset}`;
    // A database whose only message is the candidate (the workspace's lends the other fields).
    const db = { ...ws.signalDatabase(), messages: [message] };
    return { series: series.get(key, () => decodeSeries(ws.allFrames(), db, signal.name)), unit: '' };
  };

  const routes: Route[] = [
    {
      method: 'POST',
      path: '/ui/dbc',
      auth: 'token',
      handle: async (r) => {
        // The page sends the file's bytes, so a cp1252 DBC is decoded here exactly as `--dbc` decodes it.
        const bytes = await r.raw(MAX_DBC_BYTES);
        const file = path.basename(r.url.searchParams.get('name') ?? '') || 'window.dbc';
        if (bytes.length === 0) throw badField('body', `${file} is empty`);
        const db = parseDbc(decodeDbcBytes(bytes), file);
        const next: DbcSummary = {
          file,
          messages: db.messages.length,
          signals: 0,
          skipped: [],
          messageNames: { ...summary?.messageNames },
        };
        for (const message of db.messages) {
          next.messageNames[hexId(message.id, message.extended)] = message.name;
          for (const signal of message.signals) {
            try {
              ws.defineSignal({ messageId: message.id, extended: message.extended, signal }, 'dbc');
              next.signals++;
            } catch (err) {
              next.skipped.push({
                message: message.name,
                signal: signal.name,
                reason: err instanceof Error ? err.message : String(err),
              });
            }
          }
        }
        summary = next;
        return { dbc: summary };
      },
    },
    {
      method: 'GET',
      path: '/ui/series',
      auth: 'token',
      handle: async ({ url }) => {
        const query = queryFields(url, SERIES_QUERY);
        const { id, extended } = messageOf(query);
        const columns = integerField(query, 'width', 1, MAX_PLOT_COLUMNS, DEFAULT_PLOT_COLUMNS);
        const name = query.name === undefined ? undefined : stringField(query, 'name');
        const found = name === undefined ? candidateSeries(query) : definedSeries(id, extended, name);
        const { t, v } = found.series;
        const start = t[0] ?? null;
        const end = t[t.length - 1] ?? null;
        const from = numberField(query, 'from', start ?? 0);
        // Without a range, a series of one sample still gets a second of axis.
        const to = numberField(query, 'to', end !== null && end > from ? end : from + 1);
        if (!(to > from)) throw badField('to', 'must be later than from');
        return {
          messageId: hexId(id, extended),
          extended,
          name: name ?? null,
          unit: found.unit,
          total: t.length,
          start,
          end,
          from,
          to,
          width: columns,
          ...decimate({ t, v }, from, to, columns),
        };
      },
    },
    {
      method: 'GET',
      path: '/ui/heatmap',
      auth: 'token',
      handle: async ({ url }) => {
        const { id, extended } = messageOf(queryFields(url, SERIES_QUERY));
        const map = heatmaps.get(`${messageKey(id, extended)}`, () =>
          bitHeatmap(ws.allFrames(), id, extended),
        );
        return {
          messageId: hexId(id, extended),
          extended,
          ...map,
          flipRate: map.flips.map((n, bit) => (map.bytePairs[bit >> 3] ? n / map.bytePairs[bit >> 3]! : 0)),
          setRate: map.sets.map((n, bit) => (map.byteFrames[bit >> 3] ? n / map.byteFrames[bit >> 3]! : 0)),
          signals: ws
            .signals()
            .filter((d) => d.messageId === id && d.extended === extended)
            .map((d) => ({ name: d.signal.name, bits: fieldBits(d.signal) })),
        };
      },
    },
  ];

  return { routes, dbc: () => summary, close: off };
}
