import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { z } from 'zod';
import type { AdapterConfig } from '../adapters/types';
import { CanlabInputError } from '../errors';
import type { Mark } from '../workspace/types';
import type { SegmentInfo } from './segments';

/**
 * The capture kit's output folder as a unit: the project file lists the CSV segments in order and
 * the marks on the capture's timeline. The capture kit writes it; the window and the MCP
 * `load_capture` tool open it (through Workspace.loadCapture), so a recording with its marks can be
 * analysed where it was made.
 */
export const MARKS_FILE = 'marks.json';
export const PROJECT_FILE = 'capture.canlab.json';

/** Where each capture channel's frames came from: bus `bus` of adapter `adapter`. */
export interface ChannelInfo {
  channel: number;
  adapter: string;
  bus: number;
}

/** The project file (capture.canlab.json). */
export interface CaptureProject {
  format: 'canlab-capture';
  version: 1;
  started: string;
  stopped: string | null;
  frames: number;
  adapters: AdapterConfig[];
  channels: ChannelInfo[];
  segments: SegmentInfo[];
  marksFile: string;
  /** Every mark on the capture's timeline (epoch seconds, the frames' time base). */
  marks: Mark[];
}

const MarkSchema = z.object({
  id: z.number().int(),
  label: z.string().min(1),
  kind: z.enum(['interval', 'point']),
  start: z.number(),
  end: z.number().optional(),
  source: z.string(),
});

/** What reading needs; the rest of the project file is information for people and tools. */
const ProjectSchema = z.object({
  format: z.literal('canlab-capture'),
  version: z.literal(1),
  segments: z.array(z.object({ file: z.string().min(1) })),
  marksFile: z.string().min(1).optional(),
  marks: z.array(MarkSchema).default([]),
});

const MarksFileSchema = z.object({ marks: z.array(MarkSchema) });

/** A project file, or a capture folder that holds one. */
export async function isCaptureProject(target: string): Promise<boolean> {
  if (target.endsWith('.canlab.json')) return true;
  const info = await stat(target).catch(() => undefined);
  return (
    info?.isDirectory() === true &&
    (await stat(path.join(target, PROJECT_FILE)).catch(() => undefined)) !== undefined
  );
}

async function readJson(file: string): Promise<unknown> {
  const text = await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
    throw new CanlabInputError(file, err.code === 'ENOENT' ? 'no such file' : err.message);
  });
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new CanlabInputError(file, `not valid JSON: ${(err as Error).message}`);
  }
}

function parseWith<T>(schema: z.ZodType<T>, value: unknown, file: string): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new CanlabInputError(
      file,
      `not a canlab capture project: ${issue.path.join('.') || 'top level'}: ${issue.message}`,
    );
  }
  return parsed.data;
}

/**
 * The segment paths (in recording order) and marks of a capture project. Marks come from the
 * marks file when it is there, since the kit rewrites it on every mark while the project file may
 * be older (a run that crashed between the two writes).
 */
export async function readCaptureProject(
  target: string,
): Promise<{ file: string; segments: string[]; marks: Mark[] }> {
  const file = target.endsWith('.canlab.json') ? target : path.join(target, PROJECT_FILE);
  const dir = path.dirname(file);
  const project = parseWith(ProjectSchema, await readJson(file), file);
  const inside = (name: string): string => {
    const resolved = path.resolve(dir, name);
    if (path.dirname(resolved) !== path.resolve(dir))
      throw new CanlabInputError(file, `${name} is not a file of the capture folder`);
    return resolved;
  };
  const marksPath = inside(project.marksFile ?? MARKS_FILE);
  const hasMarksFile = (await stat(marksPath).catch(() => undefined)) !== undefined;
  const marks = hasMarksFile
    ? parseWith(MarksFileSchema, await readJson(marksPath), marksPath).marks
    : project.marks;
  return { file, segments: project.segments.map((s) => inside(s.file)), marks };
}
