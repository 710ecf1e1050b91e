/**
 * One capture run: several receivers into one Workspace in recording mode and one set of CSV
 * segments, with marks mirrored to `marks.json` on every change and the project file kept up to
 * date. Receive-only: it opens adapters through adapters/receive and nothing else.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { openReceiver } from '../adapters/receive';
import type { AdapterConfig, Receiver } from '../adapters/types';
import { receiveTime } from '../adapters/types';
import { writeFileAtomic, writeFileAtomicSync } from '../atomic-file';
import type { CanFrame } from '../frame';
import { Workspace } from '../workspace/workspace';
import type { Mark } from '../workspace/types';
import { MARKS_FILE, PROJECT_FILE, type CaptureProject, type ChannelInfo } from './project';
import { SegmentWriter, type SegmentInfo } from './segments';

export { MARKS_FILE, PROJECT_FILE, type CaptureProject, type ChannelInfo };

export interface CaptureSessionOptions {
  dir: string;
  adapters: AdapterConfig[];
  maxFrames: number;
  maxSeconds: number;
  project: boolean;
}

export interface CaptureSummary {
  frames: number;
  segments: SegmentInfo[];
  marks: Mark[];
  /** Marks that were still open at the stop and were closed by it. */
  closedAtStop: string[];
  malformed: number;
  projectFile?: string;
  marksFile: string;
}

export class CaptureSession {
  readonly workspace = new Workspace();
  private readonly receivers: Receiver[] = [];
  private readonly segments: SegmentWriter;
  private readonly channels: ChannelInfo[];
  private readonly channelOf = new Map<string, number>();
  private pending: CanFrame[] = [];
  private pump: Promise<void> | undefined;
  private fileWrites: Promise<void> = Promise.resolve();
  private fileError: Error | undefined;
  private failure: Error | undefined;
  private failed: (err: Error) => void = () => {};
  /** Settles with the first fatal error: a link failure or a write that failed. The CLI stops on it. */
  readonly fatal = new Promise<Error>((resolve) => (this.failed = resolve));
  private readonly started = new Date().toISOString();

  private constructor(private readonly options: CaptureSessionOptions) {
    this.segments = new SegmentWriter(options.dir, options.maxFrames, options.maxSeconds, () =>
      this.queueFileWrite(() => this.writeProject(null)),
    );
    // bus 0 of adapter i is channel i; further buses are numbered after them as they appear
    this.channels = options.adapters.map((a, i) => ({ channel: i, adapter: a.name, bus: 0 }));
    options.adapters.forEach((_, i) => this.channelOf.set(`${i}:0`, i));
  }

  /** Opens every adapter (closing those already open if one fails) and starts recording. */
  static async start(options: CaptureSessionOptions): Promise<CaptureSession> {
    const session = new CaptureSession(options);
    try {
      for (const adapter of options.adapters) session.receivers.push(await openReceiver(adapter));
      // only once every adapter opened: a refused adapter leaves no empty capture folder behind
      await mkdir(options.dir, { recursive: true });
    } catch (err) {
      await Promise.all(session.receivers.map((r) => r.close()));
      throw err;
    }
    session.workspace.startRecording(
      options.adapters.map((a) => `${a.name} (${a.backend} ${a.channel})`).join(', '),
    );
    // marks.json is written synchronously inside the mark event: by the time a mark is answered
    // (HTTP reply, key echo) the file holds it
    session.workspace.on((event) => {
      if (event.type === 'mark') session.writeMarks();
    });
    session.receivers.forEach((receiver, index) => {
      receiver.onFrame((frame) => session.receive(index, frame));
      receiver.onError((err) =>
        session.fail(new Error(`adapter '${receiver.adapter.name}': ${err.message}`)),
      );
    });
    session.writeMarks();
    session.queueFileWrite(() => session.writeProject(null));
    await session.fileWrites;
    if (session.fileError !== undefined) {
      await Promise.all(session.receivers.map((r) => r.close()));
      throw session.fileError;
    }
    return session;
  }

  get frameCount(): number {
    return this.segments.totalFrames + this.pending.length;
  }

  private fail(err: Error): void {
    this.failure ??= err;
    this.failed(this.failure);
  }

  /** Applies a mark at the current receive time (the frames' time base). */
  mark(label: string, action: Parameters<Workspace['mark']>[1], source: string): Mark {
    return this.workspace.mark(label, action, source, receiveTime());
  }

  private receive(adapterIndex: number, frame: CanFrame): void {
    const key = `${adapterIndex}:${frame.channel}`;
    let channel = this.channelOf.get(key);
    if (channel === undefined) {
      channel = this.channels.length;
      this.channels.push({ channel, adapter: this.options.adapters[adapterIndex]!.name, bus: frame.channel });
      this.channelOf.set(key, channel);
    }
    this.pending.push(channel === frame.channel ? frame : { ...frame, channel });
    this.pump ??= this.drain();
  }

  private async drain(): Promise<void> {
    // let a burst of frames gather before writing them as one batch
    await new Promise((resolve) => setImmediate(resolve));
    try {
      while (this.pending.length > 0) {
        const batch = this.pending;
        this.pending = [];
        this.workspace.appendFrames(batch);
        for (const frame of batch) await this.segments.write(frame);
      }
    } catch (err) {
      this.pending = [];
      this.fail(err instanceof Error ? err : new Error(String(err)));
    }
    this.pump = undefined;
  }

  /** File writes run one after another, each writing the state at the time it runs. */
  private queueFileWrite(write: () => Promise<void>): void {
    this.fileWrites = this.fileWrites.then(write).catch((err: unknown) => {
      const error = err instanceof Error ? err : new Error(String(err));
      this.fileError ??= error;
      this.fail(error);
    });
  }

  private writeMarks(): void {
    const doc = { version: 1, marks: this.workspace.marks() };
    try {
      writeFileAtomicSync(path.join(this.options.dir, MARKS_FILE), JSON.stringify(doc, null, 2) + '\n');
    } catch (err) {
      const error = err instanceof Error ? err : new Error(String(err));
      this.fileError ??= error;
      this.fail(error);
    }
  }

  private async writeProject(stopped: string | null): Promise<void> {
    if (!this.options.project) return;
    const project: CaptureProject = {
      format: 'canlab-capture',
      version: 1,
      started: this.started,
      stopped,
      frames: this.segments.totalFrames,
      adapters: this.options.adapters,
      channels: [...this.channels].sort((a, b) => a.channel - b.channel),
      segments: this.segments.segments(),
      marksFile: MARKS_FILE,
      marks: this.workspace.marks(),
    };
    await writeFileAtomic(path.join(this.options.dir, PROJECT_FILE), JSON.stringify(project, null, 2) + '\n');
  }

  /** Stops: closes the adapters and open marks, flushes the last segment, writes marks.json and the project file. */
  async stop(): Promise<CaptureSummary> {
    await Promise.all(this.receivers.map((r) => r.close()));
    while (this.pump !== undefined) await this.pump;
    const closedAtStop = this.workspace.status().openMarks;
    for (const label of closedAtStop) this.mark(label, 'end', 'stop');
    await this.segments.close();
    this.workspace.stopRecording();
    this.writeMarks();
    this.queueFileWrite(() => this.writeProject(new Date().toISOString()));
    await this.fileWrites;
    if (this.fileError !== undefined) throw this.fileError;
    return {
      frames: this.segments.totalFrames,
      segments: this.segments.segments(),
      marks: this.workspace.marks(),
      closedAtStop,
      malformed: this.receivers.reduce((n, r) => n + r.malformed, 0),
      ...(this.options.project ? { projectFile: path.join(this.options.dir, PROJECT_FILE) } : {}),
      marksFile: path.join(this.options.dir, MARKS_FILE),
    };
  }
}
