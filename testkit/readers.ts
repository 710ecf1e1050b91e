import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from './stack';

/**
 * Reads a dataset export back with the reference tools of its format (pycocotools, globox + PyYAML
 * for the Ultralytics YOLO layout, pyarrow, DuckDB) through tools/readers/read_export.py, so an export
 * test proves the files readable by those tools, not by our own code. The tools live in a virtualenv
 * that infra/reader-tools.sh installs (`./platform test` does it up front; a first call elsewhere
 * installs it, about 15 s).
 */

const run = promisify(execFile);
const SCRIPT = path.join(REPO_ROOT, 'tools/readers/read_export.py');
const MAX_BUFFER = 64 * 1024 * 1024;

export type ReaderMode = 'coco' | 'yolo' | 'parquet' | 'duckdb';

/** `coco <instances.json>`: the file as pycocotools' COCO loads it. */
export interface CocoSummary {
  images: number;
  annotations: number;
  categories: Array<{ id: number; name: string; supercategory: string | null }>;
  /** Annotations per category name; categories without annotations count 0. */
  per_category: Record<string, number>;
  /** The sum of every bbox component (x, y, width, height) of every annotation. */
  bbox_sum: number;
  area_sum: number;
  /** Annotations with polygon segmentation (a non-empty list). */
  segm_annotations: number;
  /** The pixel area of those polygons rasterised at their image's size (mask.area of annToRLE). */
  segm_area_sum: number;
}

/** `yolo <dir with data.yaml> <split>`: the split as Ultralytics lays it out, parsed by globox. */
export interface YoloSummary {
  names: string[];
  /** The split's images; one without a label file is a background image. */
  images: number;
  label_files: number;
  /** Every object (label line), polygons included. */
  boxes: number;
  /** The objects given as polygons (lines with more than 5 numbers). */
  polygons: number;
  per_class: Record<string, number>;
  /** Every coordinate of every label line is within [0, 1]. */
  normalised_ok: boolean;
}

/** `parquet <file>`: the file as pyarrow.parquet.read_table reads it. */
export interface ParquetSummary {
  rows: number;
  columns: string[];
  /** Arrow type per column, as pyarrow prints it (`int64`, `string`, `list<element: double>` …). */
  schema: Record<string, string>;
  /** Per integer, floating or decimal column; null when every value is null; a string past 2^53. */
  sums: Record<string, number | string | null>;
}

/** `duckdb <file> [sql]`: a query over the file (also the view `export`); count(*) by default. */
export interface DuckdbResult {
  columns: string[];
  /** Values JSON cannot hold exactly (NaN, big integers, decimals, dates, bytes) come as strings. */
  rows: unknown[][];
}

export type ExportSummary = CocoSummary | YoloSummary | ParquetSummary | DuckdbResult;

let python: Promise<string> | undefined;

/** The readers' python, installing the virtualenv the first time; a failed install is retried next call. */
function readerPython(): Promise<string> {
  python ??= run('bash', [path.join(REPO_ROOT, 'infra/reader-tools.sh'), 'path'], {
    maxBuffer: MAX_BUFFER,
  }).then(
    (out) => out.stdout.trim(),
    (err: unknown) => {
      python = undefined;
      throw new Error(`infra/reader-tools.sh path failed: ${stderrOf(err)}`, { cause: err });
    },
  );
  return python;
}

function stderrOf(err: unknown): string {
  const stderr = (err as { stderr?: unknown } | null)?.stderr;
  return typeof stderr === 'string' && stderr.trim() ? stderr.trim() : String(err);
}

export function readExport(mode: 'coco', instances: string): Promise<CocoSummary>;
export function readExport(mode: 'yolo', dir: string, split: string): Promise<YoloSummary>;
export function readExport(mode: 'parquet', file: string): Promise<ParquetSummary>;
export function readExport(mode: 'duckdb', file: string, sql?: string): Promise<DuckdbResult>;
/** Runs `read_export.py <mode> <args…>` and returns its JSON summary; rejects with its stderr. */
export async function readExport(
  mode: ReaderMode,
  ...args: Array<string | undefined>
): Promise<ExportSummary> {
  const py = await readerPython();
  const argv = [SCRIPT, mode, ...args.filter((a): a is string => a !== undefined)];
  let stdout: string;
  try {
    ({ stdout } = await run(py, argv, { maxBuffer: MAX_BUFFER }));
  } catch (err) {
    throw new Error(`read_export.py ${argv.slice(1).join(' ')} failed: ${stderrOf(err)}`, { cause: err });
  }
  return JSON.parse(stdout) as ExportSummary;
}
