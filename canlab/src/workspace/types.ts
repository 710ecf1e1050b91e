import type { IdStats } from '../analysis/ids';
import type { DbcDatabase, DbcSignal } from '../dbc/model';
import type { DecodedSignal } from '../dbc/codec';
import type { Findings } from '../detect/types';
import type { CanFrame } from '../frame';

/**
 * The analyst's open workspace: one capture (loaded from a file, or recording from an adapter),
 * the signals defined on it, the marks on its timeline, detector findings and assistant memory.
 * The window, the REST API, the MCP tool server and the capture kit all act on a Workspace, so a
 * signal an MCP tool defines shows up in the window's signal builder as one undoable step.
 */

/** `toggle` opens an interval for a label with none open, and closes it otherwise. */
export type MarkAction = 'toggle' | 'begin' | 'end' | 'point';

export interface Mark {
  id: number;
  label: string;
  kind: 'interval' | 'point';
  /** Capture time (seconds, the frames' time base) where the mark starts. */
  start: number;
  /** Undefined while an interval is open; equals `start` for a point. */
  end?: number;
  /** Where it came from: keyboard, http, gpio, mcp, window. */
  source: string;
}

/** A signal the analyst defined: a DBC signal on one message id. */
export interface SignalDefinition {
  messageId: number;
  extended: boolean;
  signal: DbcSignal;
}

export type ConnectionState = 'empty' | 'loaded' | 'recording' | 'stopped';

export interface WorkspaceStatus {
  connection: ConnectionState;
  /** The capture file or the adapter description. */
  source?: string;
  frameCount: number;
  idCount: number;
  armTx: boolean;
  signalCount: number;
  markCount: number;
  openMarks: string[];
}

/** One line of the "intelligence list": a detector finding or a mark, newest first. */
export interface IntelligenceItem {
  kind: 'finding' | 'mark';
  at: string;
  title: string;
  detail: Record<string, unknown>;
}

export interface MemoryEntry {
  key: string;
  value: string;
  at: string;
}

/** An undoable step on the signal list. */
export interface SignalStep {
  kind: 'define' | 'remove';
  definition: SignalDefinition;
  at: string;
  source: string;
}

export interface FrameQuery {
  /** Latest n frames (default documented by the implementation). */
  n?: number;
  id?: number;
  from?: number;
  to?: number;
}

/** Sends one frame onto a bus. Only adapters that can transmit provide one; the capture kit never does. */
export interface Transmitter {
  send(frame: CanFrame): Promise<void>;
}

export type WorkspaceEvent =
  | { type: 'frames'; count: number }
  | { type: 'signals'; step: SignalStep; undone: boolean }
  | { type: 'mark'; mark: Mark }
  | { type: 'armTx'; on: boolean }
  | { type: 'loaded'; source: string };

export interface WorkspaceApi {
  status(): WorkspaceStatus;
  /** Replaces the workspace's frames with a capture file's (any canlab format). */
  loadCapture(path: string): Promise<WorkspaceStatus>;
  /** Live frames from an adapter; the workspace keeps a bounded window of the newest. */
  appendFrames(frames: readonly CanFrame[]): void;
  /** Clears frames and marks and records from `source` (an adapter description) from now on. */
  startRecording(source: string): void;
  /** The recording ended (connection `stopped`); its frames stay for analysis. */
  stopRecording(): void;
  frames(query?: FrameQuery): CanFrame[];
  /** Every frame held, oldest first, without a copy (for analysis over the whole capture). */
  allFrames(): readonly CanFrame[];
  idStats(): IdStats[];
  /** Detector findings over the current frames (recomputed when frames change). */
  findings(): Findings;
  draftDbc(): DbcDatabase;

  signals(): SignalDefinition[];
  /** Adds or replaces a signal; one undoable step. Throws on an invalid definition. */
  defineSignal(definition: SignalDefinition, source: string): SignalStep;
  /** Removes a signal by message id and name; one undoable step. */
  removeSignal(messageId: number, name: string, source: string): SignalStep;
  undo(): SignalStep | undefined;
  redo(): SignalStep | undefined;
  /**
   * The steps undo() would revert (oldest first) and redo() would reapply (next first). The MCP
   * `undo` tool uses it to take back only the assistant's own newest step; the window shows it.
   */
  history(): { undo: SignalStep[]; redo: SignalStep[] };
  /** The defined signals as a signal database, one message per id (what decode() uses). */
  signalDatabase(): DbcDatabase;
  /** Decodes frames with the defined signals (latest n by default). */
  decode(
    query?: FrameQuery,
  ): Array<{ timestamp: number; id: number; extended: boolean; message: string; signals: DecodedSignal[] }>;

  /** Applies a mark action at `at` (default: the newest frame's time) following the interval state machine. */
  mark(label: string, action: MarkAction, source: string, at?: number): Mark;
  marks(): Mark[];
  intelligence(): IntelligenceItem[];

  memory(): MemoryEntry[];
  remember(key: string, value: string): MemoryEntry;

  armTx(): boolean;
  setArmTx(on: boolean): void;
  /** Refused (throws TransmitRefusedError) unless ARM TX is on and a transmitter is attached. */
  inject(frame: CanFrame): Promise<void>;
  attachTransmitter(tx: Transmitter | undefined): void;
  /** Whether a transmitter is attached (inject still needs ARM TX on). */
  hasTransmitter(): boolean;

  on(listener: (event: WorkspaceEvent) => void): () => void;
}
