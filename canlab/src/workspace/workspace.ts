/**
 * The one in-memory Workspace behind the window, the REST API, the MCP tool server and the
 * capture kit (contract: ./types.ts). Everything here is synchronous except reading a capture and
 * sending a frame, so every surface sees the same state in the same order.
 *
 * Limits (documented in docs/window-and-rest.md):
 * - a loaded capture is kept whole in memory for analysis, up to MAX_LOADED_FRAMES frames; a
 *   larger file is refused with a CanlabInputError naming the cap (the streaming commands
 *   `canlab ids/detect/decode` have no such cap);
 * - live frames (appendFrames) are kept in a window of the newest LIVE_WINDOW_FRAMES;
 * - frames() and decode() return the latest DEFAULT_FRAME_COUNT when no `n` is given.
 */
import { computeIdStats, type IdStats } from '../analysis/ids';
import { describeField } from '../analysis/bits';
import {
  compileDecoder,
  messageKey,
  signalEndByte,
  type CompiledDecoder,
  type DecodedSignal,
} from '../dbc/codec';
import type { DbcDatabase, DbcMessage, DbcSignal } from '../dbc/model';
import { buildDraftDbc, detectAll } from '../detect';
import type { Candidate, Findings } from '../detect/types';
import { CanlabInputError } from '../errors';
import { readCaptureBatches } from '../formats';
import { isCaptureProject, readCaptureProject } from '../capture/project';
import { dlcToLength, lengthToDlc, type CanFrame } from '../frame';
import { MarkRefusedError, TransmitRefusedError } from './errors';
import type {
  ConnectionState,
  FrameQuery,
  IntelligenceItem,
  Mark,
  MarkAction,
  MemoryEntry,
  SignalDefinition,
  SignalStep,
  Transmitter,
  WorkspaceApi,
  WorkspaceEvent,
  WorkspaceStatus,
} from './types';

export { MarkRefusedError, TransmitRefusedError } from './errors';

/** Frames a loaded capture may hold: about 300 bytes each in memory, so roughly 300 MB at the cap. */
export const MAX_LOADED_FRAMES = 1_000_000;
/** Newest live frames kept while recording; the same count at which the capture kit rotates segments. */
export const LIVE_WINDOW_FRAMES = 200_000;
/** Frames frames() and decode() return when the query names no `n`. */
export const DEFAULT_FRAME_COUNT = 100;

/** One frame decoded with the defined signals. */
export interface DecodedFrame {
  timestamp: number;
  id: number;
  extended: boolean;
  /** Name of the message the signals were defined on (`MSG_1A3`). */
  message: string;
  signals: DecodedSignal[];
}

export interface WorkspaceOptions {
  maxLoadedFrames?: number;
  liveWindowFrames?: number;
}

const DBC_IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
const MAX_LABEL_LENGTH = 200;

/** A DbcSignal with the defaults a hand-made signal needs (factor 1, no unit, no multiplexing). */
export function newSignal(
  fields: Pick<DbcSignal, 'name' | 'startBit' | 'length'> & Partial<DbcSignal>,
): DbcSignal {
  return {
    byteOrder: 'little_endian',
    signed: false,
    valueType: 'integer',
    factor: 1,
    offset: 0,
    minimum: 0,
    maximum: 0,
    unit: '',
    receivers: [],
    isMultiplexer: false,
    attributes: {},
    ...fields,
  };
}

/** `0x1A3` for a standard id, `0x18DAF110` for an extended one (the REST and window spelling). */
export function hexId(id: number, extended: boolean): string {
  return `0x${id
    .toString(16)
    .toUpperCase()
    .padStart(extended ? 8 : 3, '0')}`;
}

function signalKey(messageId: number, extended: boolean, name: string): string {
  return `${messageKey(messageId, extended)}/${name}`;
}

function keyOf(d: SignalDefinition): string {
  return signalKey(d.messageId, d.extended, d.signal.name);
}

/** Throws CanlabInputError naming what is wrong with a definition; the codec check comes later. */
function checkDefinition(d: SignalDefinition): void {
  const s = d.signal;
  const where = `signal ${String(s?.name)}`;
  const maxId = d.extended ? 0x1fffffff : 0x7ff;
  if (!Number.isInteger(d.messageId) || d.messageId < 0 || d.messageId > maxId)
    throw new CanlabInputError(
      where,
      `message id ${d.messageId} is outside 0..0x${maxId.toString(16).toUpperCase()} for ${d.extended ? 'an extended' : 'a standard'} id`,
    );
  if (typeof s.name !== 'string' || !DBC_IDENTIFIER.test(s.name) || s.name.length > 128)
    throw new CanlabInputError(
      where,
      'the name must be a DBC identifier (letters, digits, underscore; not starting with a digit; at most 128 characters)',
    );
  if (!Number.isInteger(s.length) || s.length < 1 || s.length > 64)
    throw new CanlabInputError(where, `length ${s.length} is outside 1..64 bits`);
  if (!Number.isInteger(s.startBit) || s.startBit < 0 || s.startBit > 511)
    throw new CanlabInputError(where, `start bit ${s.startBit} is outside 0..511`);
  if (s.byteOrder !== 'little_endian' && s.byteOrder !== 'big_endian')
    throw new CanlabInputError(
      where,
      `byte order must be little_endian or big_endian, not ${String(s.byteOrder)}`,
    );
  if (s.valueType === 'float32' && s.length !== 32)
    throw new CanlabInputError(where, 'a float32 signal is 32 bits long');
  if (s.valueType === 'float64' && s.length !== 64)
    throw new CanlabInputError(where, 'a float64 signal is 64 bits long');
  if (signalEndByte(s) > 64)
    throw new CanlabInputError(where, `start bit ${s.startBit} with length ${s.length} runs past byte 64`);
  for (const [name, v] of [
    ['factor', s.factor],
    ['offset', s.offset],
    ['minimum', s.minimum],
    ['maximum', s.maximum],
  ] as const)
    if (typeof v !== 'number' || !Number.isFinite(v))
      throw new CanlabInputError(where, `${name} must be a finite number`);
  if (s.factor === 0) throw new CanlabInputError(where, 'factor must not be 0');
}

/** One message per id holding that id's defined signals, long enough for the furthest one. */
function databaseOf(definitions: readonly SignalDefinition[]): DbcDatabase {
  const messages = new Map<number, DbcMessage>();
  for (const d of definitions) {
    const key = messageKey(d.messageId, d.extended);
    let message = messages.get(key);
    if (!message) {
      message = {
        id: d.messageId,
        extended: d.extended,
        name: `MSG_${hexId(d.messageId, d.extended).slice(2)}`,
        length: 8,
        sender: 'Vector__XXX',
        signals: [],
        attributes: {},
      };
      messages.set(key, message);
    }
    message.signals.push(d.signal);
    // A payload over 8 bytes must be a length CAN FD can carry.
    message.length = Math.max(message.length, dlcToLength(lengthToDlc(signalEndByte(d.signal), true), true));
  }
  return {
    version: '',
    newSymbols: [],
    bitTiming: '',
    nodes: [],
    valueTables: new Map(),
    messages: [...messages.values()],
    comment: 'Signals defined in canlab.',
    attributeDefinitions: [],
    attributes: {},
  };
}

function findingTitle(key: string, c: Candidate): string {
  const where = describeField(c.field);
  const conf = `conf ${c.confidence.toFixed(2)}`;
  switch (c.kind) {
    case 'counter':
      return `${key} counter ${where} +${c.step} mod ${c.modulus} (${conf})`;
    case 'checksum':
      return `${key} checksum ${c.variant} ${where} (${conf})`;
    case 'field':
      return `${key} signal ${where} ${c.signed ? 'signed' : 'unsigned'} ${c.minRaw}..${c.maxRaw} (${conf})`;
    case 'flag':
      return `${key} flag ${where} ${c.toggles} toggles (${conf})`;
    case 'value_table':
      return `${key} value table ${where} ${c.values.map((v) => v.value).join(',')} (${conf})`;
    case 'multiplexer':
      return `${key} multiplexer ${where} values ${c.groups.map((g) => g.value).join(',')} (${conf})`;
  }
}

function markTitle(m: Mark): string {
  if (m.kind === 'point') return `mark ${m.label}: point at ${m.start.toFixed(3)} s`;
  if (m.end === undefined) return `mark ${m.label}: interval open since ${m.start.toFixed(3)} s`;
  return `mark ${m.label}: interval ${m.start.toFixed(3)}–${m.end.toFixed(3)} s`;
}

interface StepRecord {
  step: SignalStep;
  /** For a define that replaced a same-named signal: the definition it replaced. */
  replaced?: SignalDefinition;
  /** Position in the signal list the step acted on, so undo restores the order. */
  index: number;
}

interface MarkRecord {
  mark: Mark;
  /** Wall-clock time and sequence number of the mark's last change (opened, closed, placed). */
  changedAt: string;
  seq: number;
}

export class Workspace implements WorkspaceApi {
  private readonly maxLoadedFrames: number;
  private readonly liveWindowFrames: number;

  private connection: ConnectionState = 'empty';
  private source: string | undefined;
  /** Frames in arrival order; live frames before `head` have left the window and are dropped lazily. */
  private buffer: CanFrame[] = [];
  private head = 0;

  private cachedFindings: Findings | undefined;
  /** When the frames last changed: findings are as new as the frames they describe. */
  private framesChangedAt = new Date().toISOString();
  private framesSeq = 0;
  private cachedIdStats: IdStats[] | undefined;

  private definitions: SignalDefinition[] = [];
  private readonly undoStack: StepRecord[] = [];
  private redoStack: StepRecord[] = [];
  private cachedDecoder: CompiledDecoder | undefined;

  private readonly markRecords: MarkRecord[] = [];
  private readonly openMarks = new Map<string, MarkRecord>();
  private nextMarkId = 1;
  /** Orders the intelligence list: every mark change and every change of the frames takes the next number. */
  private seq = 0;

  private readonly memoryEntries = new Map<string, MemoryEntry>();

  /** Off at every construction: a new window, a new process, never armed until the user arms it. */
  private armed = false;
  private transmitter: Transmitter | undefined;

  private readonly listeners = new Set<(event: WorkspaceEvent) => void>();

  constructor(options: WorkspaceOptions = {}) {
    this.maxLoadedFrames = options.maxLoadedFrames ?? MAX_LOADED_FRAMES;
    this.liveWindowFrames = options.liveWindowFrames ?? LIVE_WINDOW_FRAMES;
  }

  status(): WorkspaceStatus {
    const frames = this.allFrames();
    return {
      connection: this.connection,
      ...(this.source === undefined ? {} : { source: this.source }),
      frameCount: frames.length,
      idCount: this.idStats().length,
      armTx: this.armed,
      signalCount: this.definitions.length,
      markCount: this.markRecords.length,
      openMarks: [...this.openMarks.keys()],
    };
  }

  /**
   * Replaces the frames with the capture's. Signals and memory stay (they describe the bus, not
   * one recording); marks go, since they sit on the old capture's timeline. On any error (bad
   * file, over the cap) the workspace is left exactly as it was.
   */
  /**
   * Opens a capture file, or a capture kit project (its `capture.canlab.json` or its folder): the
   * project's segments in recording order, with its marks on the timeline.
   */
  async loadCapture(path: string): Promise<WorkspaceStatus> {
    const project = (await isCaptureProject(path)) ? await readCaptureProject(path) : undefined;
    const frames: CanFrame[] = [];
    for (const file of project?.segments ?? [path]) {
      for await (const batch of readCaptureBatches(file)) {
        if (frames.length + batch.length > this.maxLoadedFrames)
          throw new CanlabInputError(
            path,
            `holds more than ${this.maxLoadedFrames} frames, the most a workspace keeps in memory for analysis; split it, or use canlab ids/detect/decode, which stream`,
          );
        for (const f of batch) frames.push(f);
      }
    }
    this.buffer = frames;
    this.head = 0;
    this.connection = 'loaded';
    this.source = project?.file ?? path;
    this.markRecords.length = 0;
    this.openMarks.clear();
    for (const mark of project?.marks ?? []) this.restoreMark(mark);
    this.framesChanged();
    this.emit({ type: 'loaded', source: this.source });
    return this.status();
  }

  /** A mark read back from a recording keeps its id and source; an interval without end stays open. */
  private restoreMark(mark: Mark): void {
    const record: MarkRecord = { mark: { ...mark }, changedAt: new Date().toISOString(), seq: ++this.seq };
    this.markRecords.push(record);
    if (mark.kind === 'interval' && mark.end === undefined) this.openMarks.set(mark.label, record);
    this.nextMarkId = Math.max(this.nextMarkId, mark.id + 1);
  }

  /**
   * Starts a live recording from `source` (an adapter description): frames and marks are cleared.
   * appendFrames without it records too, onto whatever is held.
   */
  startRecording(source: string): void {
    this.buffer = [];
    this.head = 0;
    this.connection = 'recording';
    this.source = source;
    this.markRecords.length = 0;
    this.openMarks.clear();
    this.framesChanged();
    this.emit({ type: 'loaded', source });
  }

  /** The recording ended; its frames stay for analysis. */
  stopRecording(): void {
    if (this.connection === 'recording') this.connection = 'stopped';
  }

  /** Live frames: the workspace is then recording and keeps only the newest LIVE_WINDOW_FRAMES. */
  appendFrames(frames: readonly CanFrame[]): void {
    if (frames.length === 0) return;
    this.connection = 'recording';
    for (const f of frames) this.buffer.push(f);
    const held = this.buffer.length - this.head;
    if (held > this.liveWindowFrames) this.head = this.buffer.length - this.liveWindowFrames;
    // Copy the survivors out once the dropped part is as large as the window: amortised O(1) per frame.
    if (this.head >= this.liveWindowFrames) this.compact();
    this.framesChanged();
    this.emit({ type: 'frames', count: frames.length });
  }

  /** Every frame held, oldest first (a read-only view: analysis tools iterate it without a copy). */
  allFrames(): readonly CanFrame[] {
    if (this.head > 0) this.compact();
    return this.buffer;
  }

  /** Frames matching id/from/to (inclusive), the latest `n` of them (default DEFAULT_FRAME_COUNT), oldest first. */
  frames(query: FrameQuery = {}): CanFrame[] {
    const n = countOf(query);
    const out: CanFrame[] = [];
    const frames = this.allFrames();
    for (let i = frames.length - 1; i >= 0 && out.length < n; i--) {
      const f = frames[i]!;
      if (matches(f, query)) out.push(f);
    }
    return out.reverse();
  }

  idStats(): IdStats[] {
    this.cachedIdStats ??= computeIdStats(this.allFrames());
    return this.cachedIdStats;
  }

  findings(): Findings {
    this.cachedFindings ??= detectAll(this.allFrames());
    return this.cachedFindings;
  }

  draftDbc(): DbcDatabase {
    return buildDraftDbc(this.findings());
  }

  signals(): SignalDefinition[] {
    return [...this.definitions];
  }

  /** The defined signals as a signal database: one message per id (what decode() uses). */
  signalDatabase(): DbcDatabase {
    return databaseOf(this.definitions);
  }

  defineSignal(definition: SignalDefinition, source: string): SignalStep {
    checkDefinition(definition);
    const key = keyOf(definition);
    const index = this.definitions.findIndex((d) => keyOf(d) === key);
    const next = [...this.definitions];
    if (index >= 0) next[index] = definition;
    else next.push(definition);
    try {
      compileDecoder(databaseOf(next));
    } catch (err) {
      throw new CanlabInputError(
        `signal ${definition.signal.name}`,
        err instanceof Error ? err.message : String(err),
      );
    }
    const replaced = index >= 0 ? this.definitions[index] : undefined;
    return this.record({
      step: { kind: 'define', definition, at: new Date().toISOString(), source },
      replaced,
      index: index >= 0 ? index : next.length - 1,
    });
  }

  removeSignal(messageId: number, name: string, source: string): SignalStep {
    const index = this.definitions.findIndex((d) => d.messageId === messageId && d.signal.name === name);
    const definition = this.definitions[index];
    if (definition === undefined)
      throw new CanlabInputError(
        `signal ${name}`,
        `no signal ${name} is defined on message 0x${messageId.toString(16).toUpperCase()}`,
      );
    return this.record({ step: { kind: 'remove', definition, at: new Date().toISOString(), source }, index });
  }

  undo(): SignalStep | undefined {
    const record = this.undoStack.pop();
    if (!record) return undefined;
    this.redoStack.push(record);
    this.apply(record, true);
    return record.step;
  }

  redo(): SignalStep | undefined {
    const record = this.redoStack.pop();
    if (!record) return undefined;
    this.undoStack.push(record);
    this.apply(record, false);
    return record.step;
  }

  /** The steps that undo() would revert, oldest first, and those redo() would reapply, next first. */
  history(): { undo: SignalStep[]; redo: SignalStep[] } {
    return { undo: this.undoStack.map((r) => r.step), redo: this.redoStack.map((r) => r.step).reverse() };
  }

  /** The latest `n` frames (default DEFAULT_FRAME_COUNT) that a defined signal decodes, oldest first. */
  decode(query: FrameQuery = {}): DecodedFrame[] {
    const n = countOf(query);
    this.cachedDecoder ??= compileDecoder(databaseOf(this.definitions));
    const decoder = this.cachedDecoder;
    const out: DecodedFrame[] = [];
    const frames = this.allFrames();
    for (let i = frames.length - 1; i >= 0 && out.length < n; i--) {
      const f = frames[i]!;
      if (f.error || f.remote || !matches(f, query)) continue;
      const decoded = decoder(f.id, f.extended, f.data);
      if (decoded)
        out.push({
          timestamp: f.timestamp,
          id: f.id,
          extended: f.extended,
          message: decoded.message.name,
          signals: decoded.signals,
        });
    }
    return out.reverse();
  }

  /**
   * The interval state machine of the spec: `begin` (or `toggle` with none open for the label)
   * opens an interval; `end` (or `toggle` with one open) closes it; `point` is a single instant.
   * `begin` while one is open and `end` while none is open throw MarkRefusedError, changing nothing.
   * `at` defaults to the newest frame's timestamp, or the wall clock (epoch seconds) with no frames.
   */
  mark(label: string, action: MarkAction, source: string, at?: number): Mark {
    if (typeof label !== 'string' || label.trim() === '' || label.length > MAX_LABEL_LENGTH)
      throw new CanlabInputError(
        'mark',
        `label must be a non-empty string of at most ${MAX_LABEL_LENGTH} characters`,
      );
    if (at !== undefined && !Number.isFinite(at))
      throw new CanlabInputError('mark', 'at must be a finite number of seconds');
    const time = at ?? this.newestTime();
    const open = this.openMarks.get(label);
    let record: MarkRecord;
    switch (action) {
      case 'begin':
      case 'end':
      case 'toggle': {
        const closing = action === 'end' || (action === 'toggle' && open !== undefined);
        if (action === 'begin' && open)
          throw new MarkRefusedError(
            'already_open',
            label,
            `an interval for '${label}' is already open since ${open.mark.start} s; end it first`,
          );
        if (closing) {
          if (!open)
            throw new MarkRefusedError(
              'none_open',
              label,
              `no interval is open for '${label}'; begin one first`,
            );
          // A mark placed out of order never ends before it starts.
          open.mark.end = Math.max(time, open.mark.start);
          this.openMarks.delete(label);
          record = open;
        } else {
          record = {
            mark: { id: this.nextMarkId++, label, kind: 'interval', start: time, source },
            changedAt: '',
            seq: 0,
          };
          this.markRecords.push(record);
          this.openMarks.set(label, record);
        }
        break;
      }
      case 'point':
        record = {
          mark: { id: this.nextMarkId++, label, kind: 'point', start: time, end: time, source },
          changedAt: '',
          seq: 0,
        };
        this.markRecords.push(record);
        break;
      default:
        throw new CanlabInputError(
          'mark',
          `action must be toggle, begin, end or point, not ${String(action)}`,
        );
    }
    record.changedAt = new Date().toISOString();
    record.seq = ++this.seq;
    const mark = { ...record.mark };
    this.emit({ type: 'mark', mark });
    return mark;
  }

  /** Every mark, in the order they were opened or placed. */
  marks(): Mark[] {
    return this.markRecords.map((r) => ({ ...r.mark }));
  }

  /**
   * Detector findings (one item per candidate, dated when the frames they describe last changed)
   * and marks (dated at their last change), the most recent first.
   */
  intelligence(): IntelligenceItem[] {
    const findings = this.findings();
    const items: Array<IntelligenceItem & { seq: number }> = [];
    for (const r of this.markRecords)
      items.push({
        kind: 'mark',
        at: r.changedAt,
        title: markTitle(r.mark),
        detail: { ...r.mark },
        seq: r.seq,
      });
    for (const idf of findings.ids) {
      const candidates: Candidate[] = [
        ...idf.checksums,
        ...idf.counters,
        ...idf.multiplexers,
        ...idf.fields,
        ...idf.flags,
        ...idf.valueTables,
      ];
      for (const c of candidates)
        items.push({
          kind: 'finding',
          at: this.framesChangedAt,
          title: findingTitle(idf.key, c),
          detail: { id: idf.key, ...c },
          seq: this.framesSeq,
        });
    }
    // Stable sort: findings computed together keep the detectors' order.
    items.sort((a, b) => b.seq - a.seq);
    return items.map(({ seq: _seq, ...item }) => item);
  }

  memory(): MemoryEntry[] {
    return [...this.memoryEntries.values()];
  }

  /** Sets (or replaces) the entry under `key`. */
  remember(key: string, value: string): MemoryEntry {
    if (typeof key !== 'string' || key.trim() === '' || key.length > MAX_LABEL_LENGTH)
      throw new CanlabInputError(
        'memory',
        `key must be a non-empty string of at most ${MAX_LABEL_LENGTH} characters`,
      );
    if (typeof value !== 'string') throw new CanlabInputError('memory', 'value must be a string');
    const entry = { key, value, at: new Date().toISOString() };
    this.memoryEntries.delete(key);
    this.memoryEntries.set(key, entry);
    return { ...entry };
  }

  armTx(): boolean {
    return this.armed;
  }

  setArmTx(on: boolean): void {
    if (this.armed === on) return;
    this.armed = on;
    this.emit({ type: 'armTx', on });
  }

  /** Whether an adapter that can transmit is attached (inject still needs ARM TX). */
  hasTransmitter(): boolean {
    return this.transmitter !== undefined;
  }

  async inject(frame: CanFrame): Promise<void> {
    if (!this.armed)
      throw new TransmitRefusedError('arm_tx_off', 'ARM TX is off; arm it in the window to transmit');
    const tx = this.transmitter;
    if (!tx)
      throw new TransmitRefusedError(
        'no_transmitter',
        'no adapter that can transmit is attached to this workspace',
      );
    if (!frame.remote && frame.data.length !== dlcToLength(frame.dlc, frame.fd))
      throw new CanlabInputError('inject', `DLC ${frame.dlc} does not match ${frame.data.length} data bytes`);
    await tx.send(frame);
  }

  attachTransmitter(tx: Transmitter | undefined): void {
    this.transmitter = tx;
  }

  on(listener: (event: WorkspaceEvent) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  private compact(): void {
    this.buffer = this.buffer.slice(this.head);
    this.head = 0;
  }

  private framesChanged(): void {
    this.cachedFindings = undefined;
    this.cachedIdStats = undefined;
    this.framesChangedAt = new Date().toISOString();
    this.framesSeq = ++this.seq;
  }

  private newestTime(): number {
    const last = this.buffer[this.buffer.length - 1];
    return last && this.buffer.length > this.head ? last.timestamp : Date.now() / 1000;
  }

  private record(record: StepRecord): SignalStep {
    this.undoStack.push(record);
    this.redoStack = [];
    this.apply(record, false);
    return record.step;
  }

  /** Performs a step (or reverts it when `undo`), then tells listeners. */
  private apply(record: StepRecord, undo: boolean): void {
    const { step, replaced, index } = record;
    const adds = (step.kind === 'define') !== undo;
    if (step.kind === 'define' && replaced) this.definitions[index] = undo ? replaced : step.definition;
    else if (adds) this.definitions.splice(index, 0, step.definition);
    else this.definitions.splice(index, 1);
    this.cachedDecoder = undefined;
    this.emit({ type: 'signals', step, undone: undo });
  }

  private emit(event: WorkspaceEvent): void {
    for (const listener of this.listeners) listener(event);
  }
}

function countOf(query: FrameQuery): number {
  const n = query.n ?? DEFAULT_FRAME_COUNT;
  if (!Number.isInteger(n) || n < 0)
    throw new CanlabInputError('frames', `n must be a whole number of frames, not ${n}`);
  return n;
}

function matches(f: CanFrame, q: FrameQuery): boolean {
  return (
    (q.id === undefined || f.id === q.id) &&
    (q.from === undefined || f.timestamp >= q.from) &&
    (q.to === undefined || f.timestamp <= q.to)
  );
}
