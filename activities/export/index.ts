import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { CONTROL_RATE, precisionReport } from '../../core/control';
import { CRITIC_CHECKS } from '../../core/critic';
import type { SlicePredicate } from '../../core/curation/slice';
import type { CommitFile } from '../../core/datasets/manifest';
import {
  COCO_BETWEEN_IMAGES_AND_ANNOTATIONS,
  cocoAnnotation,
  cocoHead,
  cocoTail,
  fragment,
  type CocoAnnotation,
  type CocoCategory,
  type CocoImage,
} from '../../core/export/coco';
import { buildDatasheet, datasheetMarkdown } from '../../core/export/datasheet';
import {
  FRAME_COLUMNS,
  OBJECT_COLUMNS,
  emptyTable,
  partName,
  type FrameRow,
  type ObjectRow,
  type TableColumns,
} from '../../core/export/parquet-tables';
import { SPLITS, splitOf, type Split, type SplitSpec } from '../../core/export/splits';
import { emptyTally, tallyPage, type ExportTally, type TalliedFrame } from '../../core/export/tally';
import { yoloBoxLine, yoloDataYaml, yoloPolygonLine, type YoloTask } from '../../core/export/yolo';
import type { ExportJob, Prisma } from '../../generated/prisma/client';
import { createMaskStore } from '../annotations/masks';
import { objectLocation, readObject } from '../inspector/frame-objects';
import { recordAudit } from '../audit';
import { emitJobEvent } from '../events/jobs';
import type { ActivityDeps } from '../deps';
import { recordCommit } from './commit';
import {
  readClasses,
  readPageFrames,
  sliceTotals,
  withPageObjects,
  type ExportFrame,
  type ExportObject,
  type PageFrame,
} from './pages';
import {
  emptyGateReport,
  mergeGateReports,
  type GateMode,
  type GateReport,
} from '../../core/export/gate-report';
import { evaluatePrivacyGate } from './privacy-gate';
import { excludeBlockedSessions } from '../govern/consent';
import type { BlockedSession } from '../../core/govern/consent';
import { createSqlPool } from './sql';
import { tallyContext } from './tally-context';
import { mapLimit } from '../../core/map-limit';
import { createExportStore } from './storage';
import { createParquetEncoder, type ParquetEncoder } from './parquet-thread';
import { completeCommitRebuild, failCommitRebuild } from '../hardening/reproducible';

/**
 * The export of a slice (ExportWorkflow, `export-<job_id>`; docs/datasets.md):
 * 1. `beginExport` re-runs the privacy gate against the data as it is now and fixes the plan
 *    (totals, the class vocabulary);
 * 2. `writeExportPages` walks the slice a page of frames at a time and writes each page's parts
 *    (COCO fragments, YOLO labels, redacted images, one Parquet file per table) under the job's
 *    prefix, then records the cursor in the job row and the heartbeat. A retried attempt (a killed
 *    worker) and a resumed job continue after the last recorded page, rewriting at most the two
 *    pages in flight under the same keys, so nothing is written twice;
 * 3. `finishExport` streams the COCO files together, writes `data.yaml` and the datasheet, and
 *    records the signed, content-addressed commit.
 */

export const EXPORT_FORMATS = ['coco', 'yolo', 'parquet'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export interface ExportWorkflowInput {
  jobId: string;
  /** How soon a killed worker's page-writing activity is retried elsewhere (config export.heartbeatTimeoutSeconds). */
  heartbeatTimeoutSeconds: number;
}

export interface ExportCursor {
  /** Pages written so far; the next page's number. */
  page: number;
  /** Last frame id of the last page written. */
  after: string | null;
  frames: number;
  objects: number;
}

export interface ExportProgress {
  total_frames: number;
  total_objects: number;
  total_sessions: number;
  pages_done: number;
  frames_done: number;
  objects_done: number;
  classes: Array<{ id: number; name: string; l0: string; l1: string }>;
  /** What the pages written so far hold (recorded with the cursor, page by page). */
  tally: ExportTally;
  /** The privacy gate's report: whole for an enforcing gate, the pages' so far for an advisory one. */
  gate: GateReport;
  /** Sessions of the slice left out because their consent blocks export (docs/consent.md). */
  consent_excluded: BlockedSession[];
  /** A rebuild's comparison with the commit it reproduces, once finished (docs/hardening.md). */
  reproduction?: Awaited<ReturnType<typeof completeCommitRebuild>>;
}

export interface ExportOutcome {
  job_id: string;
  state: 'succeeded' | 'refused';
  commit_id: string | null;
  gate: GateReport;
}

export const exportWorkflowId = (jobId: string): string => `export-${jobId}`;
export const jobPrefix = (jobId: string): string => `jobs/${jobId}/`;
const outPrefix = (jobId: string): string => `${jobPrefix(jobId)}out/`;
const partsPrefix = (jobId: string): string => `${jobPrefix(jobId)}parts/`;
const pageTag = (page: number): string => String(page).padStart(5, '0');

const imagePath = (split: Split, frameId: string): string => `images/${split}/${frameId}.jpg`;

interface JobSettings {
  predicate: SlicePredicate;
  formats: ExportFormat[];
  includeImages: boolean;
  yoloTask: YoloTask;
  split: SplitSpec;
  gateMode: GateMode;
}

function settingsOf(job: {
  predicate: unknown;
  formats: string[];
  includeImages: boolean;
  split: unknown;
  gateMode: string;
}): JobSettings {
  const split = job.split as SplitSpec & { yolo_task?: YoloTask };
  return {
    predicate: job.predicate as SlicePredicate,
    formats: job.formats as ExportFormat[],
    includeImages: job.includeImages,
    yoloTask: split.yolo_task ?? 'detect',
    split,
    gateMode: job.gateMode as GateMode,
  };
}

const json = (v: unknown) => v as Prisma.InputJsonValue;
const jsonText = (v: unknown): string | null => (v == null ? null : JSON.stringify(v));
const NO_ATTRS = JSON.stringify({});
const boxOf = (o: ExportObject): number[] => [o.x1, o.y1, o.x2, o.y2];

/** Row `i` of a page's frames table. */
function putFrameRow(
  t: TableColumns<FrameRow>,
  i: number,
  f: ExportFrame,
  split: Split,
  withImage: boolean,
): void {
  t.frame_id[i] = f.frame_id;
  t.session_id[i] = f.session_id;
  t.frame_index[i] = f.index;
  t.timestamp_ms[i] = f.timestamp_ms;
  t.split[i] = split;
  t.width[i] = f.width;
  t.height[i] = f.height;
  t.image[i] = withImage ? imagePath(split, f.frame_id) : null;
  t.lighting[i] = f.lighting;
  t.context[i] = JSON.stringify(f.context);
  t.pii_audited[i] = f.pii_audited;
  t.pii_faces[i] = f.n_faces;
  t.pii_plates[i] = f.n_plates;
  t.objects[i] = f.objects.length;
}

/** Row `i` of a page's objects table. */
function putObjectRow(
  t: TableColumns<ObjectRow>,
  i: number,
  o: ExportObject,
  f: ExportFrame,
  split: Split,
  polygons: number[][] | null,
): void {
  t.object_id[i] = o.id;
  t.frame_id[i] = f.frame_id;
  t.session_id[i] = f.session_id;
  t.frame_index[i] = f.index;
  t.timestamp_ms[i] = f.timestamp_ms;
  t.split[i] = split;
  t.class_id[i] = o.class_id;
  t.class_name[i] = o.class_name;
  t.l0[i] = o.l0;
  t.l1[i] = o.l1;
  t.x1[i] = o.x1;
  t.y1[i] = o.y1;
  t.x2[i] = o.x2;
  t.y2[i] = o.y2;
  t.rot_deg[i] = o.rot_deg;
  t.rbox[i] = jsonText(o.rbox);
  t.polyline[i] = jsonText(o.polyline);
  t.mask_uri[i] = o.mask_uri;
  t.mask_polygons[i] = jsonText(polygons);
  t.keypoints[i] = jsonText(o.keypoints);
  t.cuboid_3d[i] = jsonText(o.cuboid_3d);
  t.attrs[i] = o.attrs ? JSON.stringify(o.attrs) : NO_ATTRS;
  t.conf[i] = o.conf;
  t.source[i] = o.source;
  t.state[i] = o.state;
  t.version[i] = o.version;
  t.track_id[i] = o.track_id;
  t.provenance[i] = jsonText(o.provenance);
}

/**
 * A page built and on its way out: its parts are encoded and written while the next page is read
 * and built; `written` settles once every part and the page's file list are stored.
 */
interface PageInFlight {
  frames: number;
  objects: number;
  last: string;
  /** The tally through this page. */
  tally: ExportTally;
  written: Promise<void>;
}

/**
 * A file of a page, ready to store. `path` is its path in the commit, or null for a part only the
 * export itself reads back (a COCO fragment); a Parquet file's bytes may still be encoding.
 */
interface PagePart {
  key: string;
  path: string | null;
  body: string | Promise<Buffer>;
  contentType: string;
}

/** A frame whose redacted image the page copies into the dataset. */
interface PageImage {
  frameId: string;
  redactedUri: string | null;
  split: Split;
}

/** A page built: its parts to store, its images to copy, and the tally through it. */
interface BuiltPage {
  parts: PagePart[];
  images: PageImage[];
  tally: ExportTally;
}

/**
 * Builds a page's parts in one synchronous pass. Nothing it returns refers back to the page's rows
 * (COCO fragments are serialised here, Parquet columns handed to the encoder), so the rows, most
 * of the memory an export holds, are garbage as soon as it returns, while the parts are stored.
 */
function buildPage(input: {
  jobId: string;
  settings: JobSettings;
  classes: ExportProgress['classes'];
  /** Where the page starts, and the tally up to it: after the pages before it, recorded or in flight. */
  at: ExportCursor;
  before: ExportTally;
  frames: readonly ExportFrame[];
  objects: number;
  polygons: ReadonlyMap<string, number[][]>;
  encoder: () => ParquetEncoder;
}): BuiltPage {
  const { settings, at, frames, polygons } = input;
  const out = outPrefix(input.jobId);
  const formats = new Set(settings.formats);
  const categoryIndex = new Map(input.classes.map((c, i) => [c.id, i]));
  const coco = new Map<Split, { images: CocoImage[]; annotations: CocoAnnotation[] }>();
  const objectTable = formats.has('parquet') ? emptyTable(OBJECT_COLUMNS, input.objects) : null;
  const frameTable = formats.has('parquet') ? emptyTable(FRAME_COLUMNS, frames.length) : null;
  const parts: PagePart[] = [];
  const images: PageImage[] = [];
  const tallied: TalliedFrame[] = [];
  let objectRow = 0;
  let annotationId = at.objects;
  for (let i = 0; i < frames.length; i++) {
    const f = frames[i]!;
    const split = splitOf(settings.split, f.session_id);
    tallied.push({
      sessionId: f.session_id,
      split,
      lighting: f.lighting,
      audited: f.pii_audited,
      faces: f.n_faces,
      plates: f.n_plates,
      objects: f.objects,
    });
    if (settings.includeImages) images.push({ frameId: f.frame_id, redactedUri: f.redacted_uri, split });
    if (frameTable) putFrameRow(frameTable, i, f, split, settings.includeImages);
    if (formats.has('coco')) {
      const imageId = at.frames + i + 1;
      let entry = coco.get(split);
      if (!entry) coco.set(split, (entry = { images: [], annotations: [] }));
      entry.images.push({
        id: imageId,
        file_name: `${f.frame_id}.jpg`,
        width: f.width,
        height: f.height,
        frame_id: f.frame_id,
        session_id: f.session_id,
        timestamp_ms: f.timestamp_ms,
      });
      for (const o of f.objects)
        entry.annotations.push(
          cocoAnnotation({
            id: ++annotationId,
            imageId,
            categoryId: o.class_id,
            bbox: boxOf(o),
            polygons: polygons.get(o.id) ?? null,
            objectId: o.id,
            conf: o.conf,
            attrs: o.attrs ?? {},
          }),
        );
    }
    if (formats.has('yolo')) {
      const lines: string[] = [];
      for (const o of f.objects) {
        const k = categoryIndex.get(o.class_id) ?? 0;
        lines.push(
          settings.yoloTask === 'segment'
            ? yoloPolygonLine(k, boxOf(o), polygons.get(o.id) ?? null, f.width, f.height)
            : yoloBoxLine(k, boxOf(o), f.width, f.height),
        );
      }
      const path = `labels/${split}/${f.frame_id}.txt`;
      parts.push({ key: `${out}${path}`, path, body: `${lines.join('\n')}\n`, contentType: 'text/plain' });
    }
    if (objectTable)
      for (const o of f.objects)
        putObjectRow(objectTable, objectRow++, o, f, split, polygons.get(o.id) ?? null);
  }
  const tag = pageTag(at.page);
  for (const [split, entry] of coco)
    for (const kind of ['images', 'annotations'] as const)
      parts.push({
        key: `${partsPrefix(input.jobId)}coco/${split}/${kind}-${tag}.json`,
        path: null,
        body: fragment(entry[kind]),
        contentType: 'application/json',
      });
  if (objectTable && frameTable)
    for (const [table, bytes] of [
      ['objects', input.encoder().encode(OBJECT_COLUMNS, objectTable, objectRow)],
      ['frames', input.encoder().encode(FRAME_COLUMNS, frameTable, frames.length)],
    ] as const) {
      const path = partName(table, at.page);
      parts.push({ key: `${out}${path}`, path, body: bytes, contentType: 'application/vnd.apache.parquet' });
    }
  return { parts, images, tally: tallyPage(input.before, tallied) };
}

export function createExportActivities(deps: ActivityDeps) {
  const { db, storage, config, events } = deps;
  const store = createExportStore(storage, config.storage);
  const masks = createMaskStore(storage);
  let pool: ReturnType<typeof createSqlPool> | undefined;
  const sql = () => (pool ??= createSqlPool(config.database.url)).sql;
  let parquetEncoder: ParquetEncoder | undefined;
  const encoder = () => (parquetEncoder ??= createParquetEncoder());

  const loadJob = async (jobId: string) => {
    const job = await db.exportJob.findUnique({ where: { id: jobId } });
    if (!job) throw ApplicationFailure.nonRetryable(`export job ${jobId} does not exist`, 'ExportRefused');
    return job;
  };
  const publish = (type: string, data: Record<string, unknown>) => events.publish('jobs', type, data);

  /** The page's objects' masks, as polygons by object id. */
  async function readPolygons(frames: readonly ExportFrame[]): Promise<Map<string, number[][]>> {
    const polygons = new Map<string, number[][]>();
    const masked = frames.flatMap((f) => f.objects.filter((o) => o.mask_uri));
    await mapLimit(masked, config.export.fetchConcurrency, async (o) =>
      polygons.set(o.id, (await masks.read(o.mask_uri!)).polygons),
    );
    return polygons;
  }

  /** Stores a page's parts and images, then its file list (what `finishExport` reads back). */
  async function storePage(jobId: string, page: number, built: BuiltPage): Promise<void> {
    const out = outPrefix(jobId);
    // Awaited in turn below; until then a failed encoding must not count as unhandled.
    for (const part of built.parts) if (typeof part.body !== 'string') part.body.catch(() => undefined);
    const writes: Array<() => Promise<CommitFile | null>> = built.parts.map((part) => async () => {
      const stored = await store.put(part.key, part.path ?? '', await part.body, part.contentType);
      return part.path === null ? null : stored;
    });
    for (const image of built.images)
      writes.push(async () => {
        if (!image.redactedUri)
          throw ApplicationFailure.nonRetryable(
            `frame ${image.frameId} has no redacted copy; images leave the platform only redacted`,
            'ExportRefused',
          );
        const bytes = await readObject(storage, objectLocation(storage, image.redactedUri, 'redacted'));
        const path = imagePath(image.split, image.frameId);
        return store.put(`${out}${path}`, path, bytes, 'image/jpeg');
      });
    const files = (await mapLimit(writes, config.export.fetchConcurrency, (w) => w())).filter(
      (f): f is CommitFile => f !== null,
    );
    await store.put(
      `${partsPrefix(jobId)}files-${pageTag(page)}.json`,
      '',
      JSON.stringify(files),
      'application/json',
    );
  }

  /**
   * Builds one page and starts storing it; `written` settles once it is stored. `at` is where the
   * page starts and `before` the tally up to it: after the pages before it, recorded or in flight.
   */
  async function startPage(
    jobId: string,
    settings: JobSettings,
    classes: ExportProgress['classes'],
    at: ExportCursor,
    before: ExportTally,
    frames: ExportFrame[],
  ): Promise<PageInFlight> {
    // Only what the requested formats need is built: a page's garbage is most of an export's memory.
    const formats = settings.formats;
    const polygons =
      formats.includes('coco') ||
      formats.includes('parquet') ||
      (formats.includes('yolo') && settings.yoloTask === 'segment')
        ? await readPolygons(frames)
        : new Map<string, number[][]>();
    const objects = frames.reduce((n, f) => n + f.objects.length, 0);
    const built = buildPage({ jobId, settings, classes, at, before, frames, objects, polygons, encoder });
    const written = storePage(jobId, at.page, built);
    // Awaited when the page is recorded; until then a failure must not count as unhandled.
    written.catch(() => undefined);
    return {
      frames: frames.length,
      objects,
      last: frames[frames.length - 1]!.frame_id,
      tally: built.tally,
      written,
    };
  }

  /**
   * The end of a rebuild for a reproducibility check: its files are compared with the commit's
   * (activities/hardening/reproducible.ts), the result recorded on the job and its check, and only
   * then is the scratch prefix removed, so a retry after the removal finds the result recorded.
   */
  async function finishRebuild(
    job: ExportJob,
    files: CommitFile[],
    sessions: ReadonlyArray<{ id: string }>,
    progress: ExportProgress,
  ): Promise<ExportOutcome> {
    const reproduction = await completeCommitRebuild(deps, job, {
      files,
      sessionIds: sessions.map((s) => s.id),
      consentExcluded: progress.consent_excluded,
    });
    await db.exportJob.update({
      where: { id: job.id },
      data: { state: 'succeeded', progress: json({ ...progress, reproduction }), finishedAt: new Date() },
    });
    await store.removePrefix(jobPrefix(job.id));
    const summary = {
      check_id: reproduction.check_id,
      commit_id: job.reproducesCommitId,
      reproduced: reproduction.reproduced,
      differences: reproduction.differences_total,
    };
    await emitJobEvent(
      db,
      { kind: 'export', id: job.id, startedBy: job.createdBy },
      { kind: 'job.completed', summary },
    );
    await publish('export.reproduced', { job_id: job.id, ...summary });
    return { job_id: job.id, state: 'succeeded', commit_id: null, gate: progress.gate };
  }

  return {
    /**
     * Marks the job running and fixes the plan. An enforcing gate runs again here, on the data as
     * it is now (it may have changed since the request), and a failure ends the job `refused`; an
     * advisory gate never blocks, so it is evaluated page by page as the export writes.
     */
    async beginExport(input: ExportWorkflowInput): Promise<{ refused: boolean; gate: GateReport }> {
      const job = await loadJob(input.jobId);
      const settings = settingsOf(job);
      const previous = (job.progress ?? {}) as Partial<ExportProgress>;
      // Consent is settled once, as the export starts; a resumed export keeps the slice it began with.
      const consent = previous.classes
        ? null
        : await excludeBlockedSessions(sql(), config.consent, settings.predicate);
      if (consent) settings.predicate = consent.predicate;
      const enforcing = settings.gateMode === 'enforcing';
      const gate = enforcing
        ? await evaluatePrivacyGate(sql(), settings.predicate, settings.gateMode)
        : emptyGateReport(settings.gateMode);
      if (gate.outcome === 'refused') {
        await db.exportJob.update({
          where: { id: job.id },
          data: {
            state: 'refused',
            gate: json(gate),
            error: 'the privacy gate refused the export',
            finishedAt: new Date(),
          },
        });
        await emitJobEvent(
          db,
          { kind: 'export', id: job.id, startedBy: job.createdBy },
          { kind: 'job.failed', reason: 'the privacy gate refused the export' },
        );
        await publish('export.refused', {
          job_id: job.id,
          gate: { ...gate, blocking_sessions: gate.blocking_sessions.length },
        });
        if (job.reproductionCheckId)
          await failCommitRebuild(db, job.reproductionCheckId, 'the privacy gate refused the rebuild');
        return { refused: true, gate };
      }
      const totals = consent ? await sliceTotals(sql(), settings.predicate) : null;
      const progress: ExportProgress = totals
        ? {
            total_frames: totals.frames,
            total_objects: totals.objects,
            total_sessions: totals.sessions,
            pages_done: 0,
            frames_done: 0,
            objects_done: 0,
            classes: totals.classes,
            tally: emptyTally(),
            gate,
            consent_excluded: consent?.excluded ?? [],
          }
        : (previous as ExportProgress);
      await db.exportJob.update({
        where: { id: job.id },
        data: {
          state: 'running',
          predicate: json(settings.predicate),
          gate: json(progress.gate),
          progress: json(progress),
          error: null,
        },
      });
      await publish('export.started', {
        job_id: job.id,
        frames: progress.total_frames,
        objects: progress.total_objects,
        resumed: Boolean(job.cursor),
      });
      return { refused: false, gate };
    },

    /** Writes every page after the cursor; heartbeats the cursor after each page it records. */
    async writeExportPages(input: ExportWorkflowInput): Promise<ExportCursor> {
      const ctx = Context.current();
      const job = await loadJob(input.jobId);
      const settings = settingsOf(job);
      let progress = job.progress as unknown as ExportProgress;
      let cursor: ExportCursor = (job.cursor as ExportCursor | null) ?? {
        page: 0,
        after: null,
        frames: 0,
        objects: 0,
      };
      // The job row, not the heartbeat, is where a retry resumes: it is written before each
      // heartbeat, together with the tally of the same pages.
      ctx.heartbeat(cursor);
      const pageGate = async (frames: readonly PageFrame[]): Promise<GateReport | null> =>
        settings.gateMode === 'advisory' && frames.length
          ? evaluatePrivacyGate(
              sql(),
              settings.predicate,
              'advisory',
              frames.map((f) => f.frame_id),
            )
          : null;
      const classes = await readClasses(sql());
      // Reading runs ahead of building. A page's advisory gate needs only its frames, so the frames
      // and gates of the two pages after the next are read (small answers) while the next page's
      // objects are, and the database works on two statements at once; objects are read one page
      // ahead only, since a page's rows are most of the memory an export holds.
      const planned: Array<{ frames: Promise<PageFrame[]>; gate: Promise<GateReport | null> }> = [];
      let lastFrame: Promise<string | null | undefined> = Promise.resolve(cursor.after);
      const planNext = () => {
        const frames = lastFrame.then((after) =>
          after === undefined
            ? []
            : readPageFrames(sql(), settings.predicate, after, config.export.pageFrames),
        );
        lastFrame = frames.then((f) => (f.length ? f[f.length - 1]!.frame_id : undefined));
        const gate = frames.then(pageGate);
        // Awaited on a later turn; until then a failure must not count as unhandled.
        for (const p of [frames, gate, lastFrame]) p.catch(() => undefined);
        planned.push({ frames, gate });
      };
      const readNext = () => {
        const { frames, gate } = planned.shift()!;
        planNext();
        const page = frames
          .then((f) => withPageObjects(sql(), settings.predicate, f, classes))
          .then(async (withObjects) => ({ frames: withObjects, gate: await gate }));
        page.catch(() => undefined);
        return page;
      };
      /** Records a page once its parts are stored: cursor, tally and gate in the job row, then the heartbeat. */
      const record = async (page: PageInFlight, gate: GateReport | null) => {
        await page.written;
        cursor = {
          page: cursor.page + 1,
          after: page.last,
          frames: cursor.frames + page.frames,
          objects: cursor.objects + page.objects,
        };
        progress = {
          ...progress,
          pages_done: cursor.page,
          frames_done: cursor.frames,
          objects_done: cursor.objects,
          tally: page.tally,
          gate: gate ? mergeGateReports(progress.gate, gate) : progress.gate,
        };
        await db.exportJob.update({
          where: { id: job.id },
          data: { cursor: json(cursor), progress: json(progress), gate: json(progress.gate) },
        });
        ctx.heartbeat(cursor);
        await publish('export.progress', {
          job_id: job.id,
          pages_done: cursor.page,
          frames_done: cursor.frames,
          frames_total: progress.total_frames,
          objects_done: cursor.objects,
          objects_total: progress.total_objects,
        });
      };
      // While a page is built here, the pages after it are read and the one before it is encoded
      // (on the encoding thread), stored and recorded, so the database, this thread and the encoding
      // thread work at once. Pages are recorded in order, each only once stored: the cursor in the
      // job row never names a page that is not whole.
      planNext();
      planNext();
      let next = readNext();
      let at = cursor;
      let tally = progress.tally;
      // At most two pages are in flight: the one being built and the one before it, still being
      // stored or recorded.
      let recording: Promise<void> = Promise.resolve();
      // The page's rows live only in here: held by the loop, they would outlast the page's
      // building while the next page's rows arrive.
      const buildNext = async () => {
        const { frames, gate } = await next;
        next = readNext();
        await recording;
        const page = frames.length
          ? await startPage(job.id, settings, progress.classes, at, tally, frames)
          : null;
        return { page, gate };
      };
      let previous: { page: PageInFlight; gate: GateReport | null } | null = null;
      for (;;) {
        const { page, gate } = await buildNext();
        if (previous) {
          const { page: done, gate: doneGate } = previous;
          recording = record(done, doneGate);
          // Awaited on the next turn; until then a failure must not count as unhandled.
          recording.catch(() => undefined);
        }
        if (!page) break;
        at = {
          page: at.page + 1,
          after: page.last,
          frames: at.frames + page.frames,
          objects: at.objects + page.objects,
        };
        tally = page.tally;
        previous = { page, gate };
      }
      await recording;
      return cursor;
    },

    /** Assembles the COCO files, `data.yaml` and the datasheet; records and signs the commit. */
    async finishExport(input: ExportWorkflowInput): Promise<ExportOutcome> {
      const job = await loadJob(input.jobId);
      if (job.state === 'succeeded' && (job.commitId || job.reproducesCommitId)) {
        // A retried rebuild whose result is recorded may still have its scratch files to remove.
        if (job.reproducesCommitId) await store.removePrefix(jobPrefix(job.id));
        return {
          job_id: job.id,
          state: 'succeeded',
          commit_id: job.commitId,
          gate: job.gate as unknown as GateReport,
        };
      }
      const settings = settingsOf(job);
      const progress = job.progress as unknown as ExportProgress;
      const cursor = (job.cursor as ExportCursor | null) ?? { page: 0, after: null, frames: 0, objects: 0 };
      const out = outPrefix(job.id);
      const parts = partsPrefix(job.id);
      const files: CommitFile[] = [];
      for (let page = 0; page < cursor.page; page++) {
        const listed = await store.getOrNull(`${parts}files-${pageTag(page)}.json`);
        if (listed === null)
          throw new Error(`export ${job.id}: page ${page} has no file list; resume the export`);
        files.push(...(JSON.parse(listed.toString('utf8')) as CommitFile[]));
      }
      const tally = progress.tally;
      const context = await tallyContext(sql(), tally);
      const splitsPresent = SPLITS.filter((s) => (tally.perSplit[s]?.frames ?? 0) > 0);
      if (settings.formats.includes('coco')) {
        const categories: CocoCategory[] = progress.classes.map((c) => ({
          id: c.id,
          name: c.name,
          supercategory: c.l1,
        }));
        for (const split of splitsPresent) {
          const path = `annotations/instances_${split}.json`;
          files.push(
            await store.stream(`${out}${path}`, path, 'application/json', async (append) => {
              await append(cocoHead({ name: job.name, split }));
              for (const kind of ['images', 'annotations'] as const) {
                if (kind === 'annotations') await append(COCO_BETWEEN_IMAGES_AND_ANNOTATIONS);
                let first = true;
                for (let page = 0; page < cursor.page; page++) {
                  // Fragments stream through as bytes: a page's annotations are megabytes.
                  const pieces = await store.chunksOrNull(
                    `${parts}coco/${split}/${kind}-${pageTag(page)}.json`,
                  );
                  if (!pieces) continue;
                  let empty = true;
                  for await (const chunk of pieces) {
                    if (!chunk.length) continue;
                    if (empty && !first) await append(',');
                    empty = false;
                    await append(chunk);
                  }
                  if (!empty) first = false;
                }
              }
              await append(cocoTail(categories));
            }),
          );
        }
      }
      if (settings.formats.includes('yolo'))
        files.push(
          await store.put(
            `${out}data.yaml`,
            'data.yaml',
            yoloDataYaml(
              progress.classes.map((c) => c.name),
              splitsPresent,
            ),
            'text/yaml',
          ),
        );
      const gate = progress.gate;
      // Every advisory gate call logs its gap count (spec "Export privacy gate"); an export's
      // advisory gate is complete once its last page is written.
      if (gate.mode === 'advisory')
        Context.current().log[gate.outcome === 'gaps' ? 'warn' : 'info']('export privacy gate (advisory)', {
          job_id: job.id,
          outcome: gate.outcome,
          checked_frames: gate.checked_frames,
          frames_without_audit: gate.frames_without_audit,
          uncovered_objects: gate.uncovered_objects,
        });
      const controls = await db.controlSample.findMany({
        where: { sessionId: { in: Object.keys(tally.sessions) } },
        select: { verdict: true, checks: true },
      });
      const datasheet = buildDatasheet({
        name: job.name,
        predicate: settings.predicate,
        formats: settings.formats,
        split: settings.split,
        totals: { objects: tally.objects, frames: tally.frames, sessions: context.sessions.length },
        perClass: tally.perClass,
        perL1: tally.perL1,
        perContext: { lighting: tally.perLighting },
        perRarityBand: context.perRarityBand,
        perState: tally.perState,
        perSource: tally.perSource,
        perSplit: tally.perSplit,
        verification: {
          human_verified: tally.perSource.human ?? 0,
          auto_accepted: tally.perState.auto_accept ?? 0,
          other: tally.objects - (tally.perSource.human ?? 0) - (tally.perState.auto_accept ?? 0),
        },
        controlPrecision: precisionReport(controls, CRITIC_CHECKS),
        pii: { ...tally.pii, frames: tally.frames },
        gate: {
          mode: gate.mode,
          outcome: gate.outcome,
          frames_without_audit: gate.frames_without_audit,
          uncovered_objects: gate.uncovered_objects,
        },
        sessions: context.sessions,
        modelVersions: context.modelVersions,
      });
      files.push(
        await store.put(
          `${out}datasheet.json`,
          'datasheet.json',
          JSON.stringify(datasheet, null, 2),
          'application/json',
        ),
        await store.put(`${out}datasheet.md`, 'datasheet.md', datasheetMarkdown(datasheet), 'text/markdown'),
      );
      if (job.reproducesCommitId) return finishRebuild(job, files, context.sessions, progress);
      const commit = await recordCommit(
        { db, config },
        {
          jobId: job.id,
          name: job.name,
          prefix: out,
          files,
          predicate: settings.predicate,
          split: { ...settings.split, yolo_task: settings.yoloTask },
          formats: settings.formats,
          counts: {
            objects: tally.objects,
            frames: tally.frames,
            sessions: context.sessions.length,
            per_class: tally.perClass,
            per_split: tally.perSplit,
            control_rate: CONTROL_RATE,
          },
          gate: {
            mode: gate.mode,
            outcome: gate.outcome,
            checked_frames: gate.checked_frames,
            frames_without_audit: gate.frames_without_audit,
            uncovered_objects: gate.uncovered_objects,
          },
          sessionIds: context.sessions.map((s) => s.id),
          modelVersions: context.modelVersions,
          createdBy: job.createdBy,
        },
      );
      await db.exportJob.update({
        where: { id: job.id },
        data: { state: 'succeeded', commitId: commit.commitId, finishedAt: new Date() },
      });
      await store.removePrefix(parts);
      // The same files under the same name and selection are an existing commit: keep one copy.
      if (commit.jobId !== job.id) await store.removePrefix(out);
      await recordAudit(db, {
        actorId: job.createdBy,
        action: 'export.succeeded',
        subjectType: 'dataset',
        subjectId: commit.commitId,
        detail: { job_id: job.id, name: commit.name, version: commit.version, gate: gate.outcome },
      });
      await emitJobEvent(
        db,
        { kind: 'export', id: job.id, startedBy: job.createdBy },
        {
          kind: 'job.completed',
          summary: { commit_id: commit.commitId, name: commit.name, version: commit.version },
        },
      );
      await publish('export.succeeded', {
        job_id: job.id,
        commit_id: commit.commitId,
        name: commit.name,
        version: commit.version,
      });
      return { job_id: job.id, state: 'succeeded', commit_id: commit.commitId, gate };
    },

    /** A run that gave up: the job keeps its cursor, so `POST /api/exports/{id}/resume` continues it. */
    async failExport(input: { jobId: string; error: string }): Promise<void> {
      const [job] = await db.exportJob.updateManyAndReturn({
        where: { id: input.jobId, state: { in: ['queued', 'running'] } },
        data: { state: 'failed', error: input.error },
      });
      if (job)
        await emitJobEvent(
          db,
          { kind: 'export', id: job.id, startedBy: job.createdBy },
          { kind: 'job.failed', reason: input.error },
        );
      if (job?.reproductionCheckId) await failCommitRebuild(db, job.reproductionCheckId, input.error);
      await publish('export.failed', { job_id: input.jobId, error: input.error });
    },
  };
}
