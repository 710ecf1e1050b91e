import { spawn, execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { JpegStreamSplitter } from '../../core/media/jpeg-stream';
import { DriveRefusedError } from '../../core/media/errors';
import { ffmpegSelectExpression } from '../../core/media/sampling';
import type { SourceFrame } from './frame-source';

const run = promisify(execFile);

export interface VideoProbe {
  format: string;
  codec: string;
  width: number;
  height: number;
  durationMs: number;
  /** The container's start time; frame timestamps are counted from it. */
  startMs: number;
  sourceFps: number | null;
}

interface FfprobeOut {
  format?: { format_name?: string; duration?: string; start_time?: string };
  streams?: Array<{
    codec_name?: string;
    width?: number;
    height?: number;
    avg_frame_rate?: string;
    duration?: string;
    start_time?: string;
  }>;
}

const rate = (r: string | undefined): number | null => {
  const [n, d] = (r ?? '').split('/').map(Number);
  return n && d ? n / d : null;
};

const lastLines = (text: string, n = 3): string => text.trim().split('\n').slice(-n).join(' | ');

/** Network trouble between ffmpeg and the object store is worth a retry; bad bytes are not. */
const TRANSIENT =
  /Connection refused|Connection reset|timed out|Server returned 5\d\d|HTTP error 5\d\d|End of file while parsing HTTP/i;

function failure(what: string, stderr: string): Error {
  const message = `${what}: ${lastLines(stderr) || 'no output'}`;
  return TRANSIENT.test(stderr) ? new Error(message) : new DriveRefusedError(message);
}

export async function probeVideo(ffprobePath: string, input: string): Promise<VideoProbe> {
  let stdout: string;
  try {
    ({ stdout } = await run(
      ffprobePath,
      [
        '-v',
        'error',
        '-print_format',
        'json',
        '-show_format',
        '-show_streams',
        '-select_streams',
        'v:0',
        input,
      ],
      { maxBuffer: 8 << 20 },
    ));
  } catch (err) {
    const e = err as { code?: string | number; stderr?: string };
    if (e.code === 'ENOENT')
      throw new Error(`ffprobe is not at ${ffprobePath} (set APP_INGEST__FFPROBE_PATH)`, { cause: err });
    throw failure('not a readable video', e.stderr ?? String(err));
  }
  const out = JSON.parse(stdout) as FfprobeOut;
  const stream = out.streams?.[0];
  if (!stream?.width || !stream.height)
    throw new DriveRefusedError(
      `not a video: ffprobe found no video stream (container ${out.format?.format_name ?? 'unknown'})`,
    );
  const duration = Number(stream.duration ?? out.format?.duration);
  if (!Number.isFinite(duration) || duration <= 0)
    throw new DriveRefusedError('not a video: it has no duration (a single image or an empty stream)');
  return {
    format: out.format?.format_name ?? 'unknown',
    codec: stream.codec_name ?? 'unknown',
    width: stream.width,
    height: stream.height,
    durationMs: duration * 1000,
    startMs: Number(out.format?.start_time ?? stream.start_time ?? 0) * 1000 || 0,
    sourceFps: rate(stream.avg_frame_rate),
  };
}

const SHOWINFO = /Parsed_showinfo.*?\bn:\s*(\d+).*?\bpts_time:\s*(-?[\d.e+-]+)/;

/**
 * Decodes the video once, streaming: ffmpeg's select filter takes the first frame of every
 * 1/fps-second bucket (core/media/sampling), keeping its own timestamp, and writes JPEGs to a
 * pipe; showinfo reports each kept frame's pts on stderr. Only the frames in flight are in memory.
 * `-xerror` makes a decode error (truncated or corrupt data) fail the run instead of ending early.
 */
export async function* extractVideoFrames(opts: {
  ffmpegPath: string;
  input: string;
  fps: number;
  startMs: number;
}): AsyncGenerator<SourceFrame> {
  const args = [
    '-hide_banner',
    '-nostdin',
    '-nostats',
    '-v',
    'info',
    '-xerror',
    '-i',
    opts.input,
    '-map',
    '0:v:0',
    '-an',
    '-sn',
    '-dn',
    '-vf',
    `select='${ffmpegSelectExpression(opts.fps)}',showinfo`,
    '-fps_mode',
    'passthrough',
    '-c:v',
    'mjpeg',
    '-q:v',
    '3',
    '-f',
    'image2pipe',
    'pipe:1',
  ];
  const proc = spawn(opts.ffmpegPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const timestamps: number[] = [];
  let stderr = '';
  let wake: (() => void) | undefined;
  let pendingLine = '';
  proc.stderr.setEncoding('utf8');
  proc.stderr.on('data', (text: string) => {
    const lines = (pendingLine + text).split('\n');
    pendingLine = lines.pop() ?? '';
    for (const line of lines) {
      const m = SHOWINFO.exec(line);
      if (m) timestamps[Number(m[1])] = Number(m[2]) * 1000 - opts.startMs;
      else if (stderr.length < 64_000) stderr += `${line}\n`;
    }
    wake?.();
  });
  const exited = new Promise<number | null>((resolve, reject) => {
    proc.once('error', (err: NodeJS.ErrnoException) =>
      reject(
        err.code === 'ENOENT'
          ? new Error(`ffmpeg is not at ${opts.ffmpegPath} (set APP_INGEST__FFMPEG_PATH)`)
          : err,
      ),
    );
    proc.once('close', (code) => {
      wake?.();
      resolve(code);
    });
  });
  let done = false;
  void exited.finally(() => (done = true)).catch(() => undefined);
  const timestampOf = async (n: number): Promise<number> => {
    while (timestamps[n] === undefined && !done) await new Promise<void>((r) => (wake = r));
    if (timestamps[n] === undefined) throw new Error(`ffmpeg gave frame ${n} without a timestamp`);
    return timestamps[n]!;
  };
  const splitter = new JpegStreamSplitter();
  let n = 0;
  try {
    for await (const chunk of proc.stdout) {
      for (const bytes of splitter.push(chunk as Buffer)) {
        yield { timestampMs: await timestampOf(n), bytes, contentType: 'image/jpeg' };
        n++;
      }
    }
    const code = await exited;
    if (code !== 0) throw failure(`ffmpeg stopped after ${n} frames (exit ${code})`, stderr);
    if (splitter.pending)
      throw new DriveRefusedError(`ffmpeg's output ended inside a frame after ${n} frames`);
  } finally {
    if (proc.exitCode === null) proc.kill('SIGKILL');
  }
}
