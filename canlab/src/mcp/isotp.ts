/**
 * ISO 15765-2 (ISO-TP) reassembly over a capture: single frames, first frames with their
 * consecutive frames, and flow-control frames, per arbitration id and channel. Normal addressing
 * (the protocol control information starts at byte 0), classic and CAN FD escape lengths.
 *
 * Pure: frames in, transfers out. Which ids carry ISO-TP is not known from the frames alone, so a
 * stream (id + channel) is reported only when nearly all of its frames parse as ISO-TP frames that
 * belong to a well-formed transfer; ordinary signal messages rarely do (see `MIN_CONSUMED_SHARE`).
 */
import { formatId } from '../analysis/bits';
import type { CanFrame } from '../frame';

export type FlowStatus = 'continue' | 'wait' | 'overflow' | 'reserved';

export interface FlowControl {
  timestamp: number;
  /** Id that sent the flow control (the receiver of the transfer). */
  id: string;
  status: FlowStatus;
  /** Consecutive frames allowed before the next flow control; 0 = no further flow control. */
  blockSize: number;
  /** Minimum separation time byte as sent (0x00–0x7F ms, 0xF1–0xF9 = 100–900 µs). */
  stMin: number;
}

export interface IsoTpMessage {
  channel: number;
  /** Sender id, `0x7E8` style. */
  id: string;
  start: number;
  end: number;
  kind: 'single' | 'multi';
  /** Length announced by the single or first frame. */
  length: number;
  /** Reassembled payload, space-separated hex byte pairs (the bytes received so far when incomplete). */
  data: string;
  frames: number;
  complete: boolean;
  /** Why an incomplete transfer stopped: a sequence gap, a new first frame, or the capture's end. */
  error?: string;
  /** Flow-control frames sent back to this transfer (multi-frame only). */
  flowControl: FlowControl[];
}

export interface IsoTpStream {
  channel: number;
  id: string;
  frames: number;
  /** Frames that took part in a well-formed single frame, transfer or flow control. */
  consumed: number;
  messages: IsoTpMessage[];
  flowControls: number;
}

/** A stream counts as ISO-TP when at least this share of its frames parse into well-formed transfers. */
export const MIN_CONSUMED_SHARE = 0.9;

const FLOW_STATUS: readonly FlowStatus[] = ['continue', 'wait', 'overflow'];

function hex(bytes: ArrayLike<number>): string {
  return Array.from(bytes, (b) => b.toString(16).toUpperCase().padStart(2, '0')).join(' ');
}

interface Pending {
  message: IsoTpMessage;
  bytes: number[];
  nextSeq: number;
}

class StreamState {
  readonly stream: IsoTpStream;
  pending: Pending | undefined;
  /** Padding byte seen after single-frame payloads; null once two different ones were seen. */
  padding: number | null | undefined;

  constructor(channel: number, id: string) {
    this.stream = { channel, id, frames: 0, consumed: 0, messages: [], flowControls: 0 };
  }

  notePadding(rest: Uint8Array): void {
    for (const b of rest) {
      if (this.padding === undefined) this.padding = b;
      else if (this.padding !== b) this.padding = null;
    }
  }

  /** Carries a multi-frame transfer or flow control: ISO-TP beyond doubt. */
  get segmented(): boolean {
    return this.stream.flowControls > 0 || this.stream.messages.some((m) => m.kind === 'multi' && m.complete);
  }

  abort(reason: string): void {
    const p = this.pending;
    if (!p) return;
    p.message.error = reason;
    p.message.data = hex(p.bytes);
    this.stream.messages.push(p.message);
    this.pending = undefined;
  }

  /** Feeds one frame; returns the flow control it carried, if any. */
  feed(frame: CanFrame): FlowControl | undefined {
    const d = frame.data;
    this.stream.frames++;
    const b0 = d[0];
    if (b0 === undefined) return undefined;
    const type = b0 >> 4;
    const at = frame.timestamp;
    if (type === 0) {
      // Single frame: length in the low nibble; 0 escapes to a length byte (CAN FD, more than 8 bytes).
      let length = b0 & 0x0f;
      let offset = 1;
      if (length === 0 && d.length > 8) {
        length = d[1] ?? 0;
        offset = 2;
      }
      if (length === 0 || offset + length > d.length) return undefined;
      this.abort('interrupted by a single frame');
      this.stream.consumed++;
      this.notePadding(d.subarray(offset + length));
      this.stream.messages.push({
        channel: frame.channel,
        id: this.stream.id,
        start: at,
        end: at,
        kind: 'single',
        length,
        data: hex(d.subarray(offset, offset + length)),
        frames: 1,
        complete: true,
        flowControl: [],
      });
      return undefined;
    }
    if (type === 1) {
      // First frame: 12-bit length; 0 escapes to a 32-bit length (ISO 15765-2:2016).
      let length = ((b0 & 0x0f) << 8) | (d[1] ?? 0);
      let offset = 2;
      if (length === 0) {
        length = (((d[2] ?? 0) << 24) | ((d[3] ?? 0) << 16) | ((d[4] ?? 0) << 8) | (d[5] ?? 0)) >>> 0;
        offset = 6;
      }
      // A first frame is only used for payloads longer than one single frame can carry.
      if (length <= d.length - offset || d.length < 8) return undefined;
      this.abort('interrupted by a new first frame');
      const bytes = Array.from(d.subarray(offset));
      this.pending = {
        bytes,
        nextSeq: 1,
        message: {
          channel: frame.channel,
          id: this.stream.id,
          start: at,
          end: at,
          kind: 'multi',
          length,
          data: '',
          frames: 1,
          complete: false,
          flowControl: [],
        },
      };
      return undefined;
    }
    if (type === 2) {
      const p = this.pending;
      if (!p) return undefined;
      const seq = b0 & 0x0f;
      if (seq !== p.nextSeq) {
        this.abort(`consecutive frame ${seq} where ${p.nextSeq} was expected`);
        return undefined;
      }
      p.nextSeq = (p.nextSeq + 1) & 0x0f;
      p.message.frames++;
      p.message.end = at;
      const room = p.message.length - p.bytes.length;
      for (let i = 1; i < d.length && i <= room; i++) p.bytes.push(d[i]!);
      if (p.bytes.length >= p.message.length) {
        p.message.complete = true;
        p.message.data = hex(p.bytes);
        this.stream.consumed += p.message.frames;
        this.stream.messages.push(p.message);
        this.pending = undefined;
      }
      return undefined;
    }
    if (type === 3 && d.length >= 3) {
      const status = b0 & 0x0f;
      this.stream.flowControls++;
      this.stream.consumed++;
      return {
        timestamp: at,
        id: this.stream.id,
        status: FLOW_STATUS[status] ?? 'reserved',
        blockSize: d[1]!,
        stMin: d[2]!,
      };
    }
    return undefined;
  }
}

export interface IsoTpOptions {
  /** Keep every stream that yields a transfer, even below MIN_CONSUMED_SHARE (used when the caller names the id). */
  keepAll?: boolean;
}

/**
 * Reassembles the ISO-TP transfers of a capture. Flow-control frames are attached to the open
 * multi-frame transfer on the same channel, from another id, whose first frame came most recently.
 */
export function reassembleIsoTp(frames: Iterable<CanFrame>, options: IsoTpOptions = {}): IsoTpStream[] {
  const states = new Map<string, StreamState>();
  for (const frame of frames) {
    if (frame.error || frame.remote) continue;
    const id = formatId(frame.id, frame.extended);
    const key = `${frame.channel}/${id}`;
    let state = states.get(key);
    if (!state) {
      state = new StreamState(frame.channel, id);
      states.set(key, state);
    }
    const fc = state.feed(frame);
    if (!fc) continue;
    let target: Pending | undefined;
    for (const other of states.values()) {
      const p = other.pending;
      if (
        p &&
        other !== state &&
        other.stream.channel === frame.channel &&
        (!target || p.message.start > target.message.start)
      )
        target = p;
    }
    target?.message.flowControl.push(fc);
  }
  const out: IsoTpStream[] = [];
  const segmentedChannels = new Set<number>();
  const parses = (s: IsoTpStream): boolean => s.consumed / s.frames >= MIN_CONSUMED_SHARE;
  for (const state of states.values()) {
    state.abort('capture ended before the transfer completed');
    if (state.segmented && parses(state.stream)) segmentedChannels.add(state.stream.channel);
  }
  for (const state of states.values()) {
    const s = state.stream;
    // A stream of single frames only (requests, short answers) is believed when its channel carries
    // segmented ISO-TP traffic and its frames pad with one constant byte, as ISO-TP senders do.
    const believable = state.segmented || (segmentedChannels.has(s.channel) && state.padding !== null);
    const wellFormed = believable && parses(s);
    if (wellFormed || (options.keepAll && s.messages.length > 0)) out.push(s);
  }
  return out.sort((a, b) => a.channel - b.channel || a.id.localeCompare(b.id));
}
