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
  type CocoCategory,
  type CocoImage,
} from '../../core/export/coco';
import { buildDatasheet, datasheetMarkdown } from '../../core/export/datasheet';
import {
  FRAME_COLUMNS,
  OBJECT_COLUMNS,
  parquetPart,
  partName,
  type FrameRow,
  type ObjectRow,
} from '../../core/export/parquet-tables';
import { SPLITS, splitOf, type Split, type SplitSpec } from '../../core/export/splits';
import { emptyTally, tallyPage, type ExportTally, type TalliedFrame } from '../../core/export/tally';
import { yoloBoxLine, yoloDataYaml, yoloPolygonLine, type YoloTask } from '../../core/export/yolo';
import type { Prisma } from '../../generated/prisma/client';
import { createMaskStore } from '../annotations/masks';
import { objectLocation, readObject } from '../inspector/frame-objects';
import { recordAudit } from '../audit';
import type { ActivityDeps } from '../deps';
import { recordCommit } from './commit';
import { readExportPage, sliceTotals, type ExportFrame, type ExportObject } from './pages';
import {
  emptyGateReport,
  mergeGateReports,
  type GateMode,
  type GateReport,
} from '../../core/export/gate-report';
import { evaluatePrivacyGate } from './privacy-gate';
import { createSqlPool } from './sql';
import { tallyContext } from './tally-context';
import { mapLimit } from '../../core/map-limit';
import { createExportStore } from './storage';

/**
 * The export of a slice (ExportWorkflow, `export-<job_id>`; docs/datasets.md):
 * 1. `beginExport` re-runs the privacy gate against the data as it is now and fixes the plan
 *    (totals, the class vocabulary);
 * 2. `writeExportPages` walks the slice a page of frames at a time and writes each page's parts
 *    (COCO fragments, YOLO labels, redacted images, one Parquet file per table) under the job's
 *    prefix, then records the cursor in the job row and the heartbeat. A retried attempt (a killed
 *    worker) and a resumed job continue after the last recorded page, rewriting at most the page
 *    in flight under the same keys, so nothing is written twice;
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

function frameRowOf(f: ExportFrame, split: Split, withImage: boolean): FrameRow {
  return {
    frame_id: f.frame_id,
    session_id: f.session_id,
    frame_index: f.index,
    timestamp_ms: f.timestamp_ms,
    split,
    width: f.width,
    height: f.height,
    image: withImage ? imagePath(split, f.frame_id) : null,
    lighting: f.lighting,
    context: JSON.stringify(f.context),
    pii_audited: f.pii_audited,
    pii_faces: f.n_faces,
    pii_plates: f.n_plates,
    objects: f.objects.length,
  };
}

function objectRowOf(o: ExportObject, f: ExportFrame, split: Split, polygons: number[][] | null): ObjectRow {
  return {
    object_id: o.id,
    frame_id: o.frame_id,
    session_id: f.session_id,
    frame_index: f.index,
    timestamp_ms: f.timestamp_ms,
    split,
    class_id: o.class_id,
    class_name: o.class_name,
    l0: o.l0,
    l1: o.l1,
    x1: o.bbox[0]!,
    y1: o.bbox[1]!,
    x2: o.bbox[2]!,
    y2: o.bbox[3]!,
    rot_deg: o.rot_deg,
    rbox: o.rbox.length ? JSON.stringify(o.rbox) : null,
    polyline: jsonText(o.polyline),
    mask_uri: o.mask_uri,
    mask_polygons: jsonText(polygons),
    keypoints: jsonText(o.keypoints),
    cuboid_3d: jsonText(o.cuboid_3d),
    attrs: JSON.stringify(o.attrs),
    conf: o.conf,
    source: o.source,
    state: o.state,
    version: o.version,
    track_id: o.track_id,
    provenance: jsonText(o.provenance),
  };
}

export function createExportActivities(deps: ActivityDeps) {
  const { db, storage, config, events } = deps;
  const store = createExportStore(storage, config.storage);
  const masks = createMaskStore(storage);
  let pool: ReturnType<typeof createSqlPool> | undefined;
  const sql = () => (pool ??= createSqlPool(config.database.url)).sql;

  const loadJob = async (jobId: string) => {
    const job = await db.exportJob.findUnique({ where: { id: jobId } });
    if (!job) throw ApplicationFailure.nonRetryable(`export job ${jobId} does not exist`, 'ExportRefused');
    return job;
  };
  const publish = (type: string, data: Record<string, unknown>) => events.publish('jobs', type, data);

  /** Writes one page's parts; returns the files of the commit it wrote (labels, images, Parquet). */
  async function writePage(
    jobId: string,
    settings: JobSettings,
    progress: ExportProgress,
    cursor: ExportCursor,
    frames: ExportFrame[],
  ): Promise<{ files: CommitFile[]; frames: number; objects: number; last: string; tally: ExportTally }> {
    const out = outPrefix(jobId);
    const parts = partsPrefix(jobId);
    const tag = pageTag(cursor.page);
    const categoryIndex = new Map(progress.classes.map((c, i) => [c.id, i]));
    const objects = frames.flatMap((f) => f.objects);
    const wants = {
      coco: settings.formats.includes('coco'),
      yolo: settings.formats.includes('yolo'),
      parquet: settings.formats.includes('parquet'),
    };
    // Only what the requested formats need is built: a page's garbage is most of an export's memory.
    const polygons = new Map<string, number[][]>();
    if (wants.coco || wants.parquet || (wants.yolo && settings.yoloTask === 'segment'))
      await mapLimit(
        objects.filter((o) => o.mask_uri),
        config.export.fetchConcurrency,
        async (r) => polygons.set(r.id, (await masks.read(r.mask_uri!)).polygons),
      );

    const files: CommitFile[] = [];
    const coco = new Map<Split, { images: CocoImage[]; annotations: object[] }>();
    const objectRows: ObjectRow[] = [];
    const frameRows: FrameRow[] = [];
    let annotationId = cursor.objects;
    const imageJobs: Array<{ row: ExportFrame; split: Split }> = [];
    const labelFiles: Array<{ path: string; text: string }> = [];
    const tallied: TalliedFrame[] = [];
    frames.forEach((f, i) => {
      const split = splitOf(settings.split, f.session_id);
      tallied.push({
        sessionId: f.session_id,
        split,
        lighting: f.lighting,
        audited: f.pii_audited,
        faces: f.n_faces,
        plates: f.n_plates,
        objects: f.objects.map((o) => ({
          className: o.class_name,
          l1: o.l1,
          state: o.state,
          source: o.source,
        })),
      });
      if (settings.includeImages) imageJobs.push({ row: f, split });
      if (wants.parquet) frameRows.push(frameRowOf(f, split, settings.includeImages));
      if (wants.coco) {
        const imageId = cursor.frames + i + 1;
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
              bbox: o.bbox,
              polygons: polygons.get(o.id) ?? null,
              objectId: o.id,
              conf: o.conf,
              attrs: o.attrs,
            }),
          );
      }
      if (wants.yolo) {
        const lines = f.objects.map((o) => {
          const k = categoryIndex.get(o.class_id) ?? 0;
          return settings.yoloTask === 'segment'
            ? yoloPolygonLine(k, o.bbox, polygons.get(o.id) ?? null, f.width, f.height)
            : yoloBoxLine(k, o.bbox, f.width, f.height);
        });
        labelFiles.push({ path: `labels/${split}/${f.frame_id}.txt`, text: `${lines.join('\n')}\n` });
      }
      if (wants.parquet)
        for (const o of f.objects) objectRows.push(objectRowOf(o, f, split, polygons.get(o.id) ?? null));
    });

    const writes: Array<() => Promise<CommitFile | null>> = [];
    if (wants.coco)
      for (const [split, entry] of coco) {
        writes.push(async () => {
          await store.put(
            `${parts}coco/${split}/images-${tag}.json`,
            '',
            fragment(entry.images),
            'application/json',
          );
          return null;
        });
        writes.push(async () => {
          await store.put(
            `${parts}coco/${split}/annotations-${tag}.json`,
            '',
            fragment(entry.annotations),
            'application/json',
          );
          return null;
        });
      }
    if (wants.yolo)
      for (const label of labelFiles)
        writes.push(() => store.put(`${out}${label.path}`, label.path, label.text, 'text/plain'));
    if (settings.formats.includes('parquet')) {
      const objectsPart = partName('objects', cursor.page);
      const framesPart = partName('frames', cursor.page);
      writes.push(() =>
        store.put(
          `${out}${objectsPart}`,
          objectsPart,
          parquetPart(OBJECT_COLUMNS, objectRows),
          'application/vnd.apache.parquet',
        ),
      );
      writes.push(() =>
        store.put(
          `${out}${framesPart}`,
          framesPart,
          parquetPart(FRAME_COLUMNS, frameRows),
          'application/vnd.apache.parquet',
        ),
      );
    }
    for (const { row, split } of imageJobs)
      writes.push(async () => {
        if (!row.redacted_uri)
          throw ApplicationFailure.nonRetryable(
            `frame ${row.frame_id} has no redacted copy; images leave the platform only redacted`,
            'ExportRefused',
          );
        const bytes = await readObject(storage, objectLocation(storage, row.redacted_uri, 'redacted'));
        const path = imagePath(split, row.frame_id);
        return store.put(`${out}${path}`, path, bytes, 'image/jpeg');
      });
    const written = await mapLimit(writes, config.export.fetchConcurrency, (w) => w());
    for (const f of written) if (f) files.push(f);
    await store.put(`${parts}files-${tag}.json`, '', JSON.stringify(files), 'application/json');
    const tally = tallyPage(progress.tally, tallied);

    return {
      files,
      frames: frames.length,
      objects: objects.length,
      last: frames[frames.length - 1]!.frame_id,
      tally,
    };
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
        await publish('export.refused', {
          job_id: job.id,
          gate: { ...gate, blocking_sessions: gate.blocking_sessions.length },
        });
        return { refused: true, gate };
      }
      const previous = (job.progress ?? {}) as Partial<ExportProgress>;
      const totals = previous.classes ? null : await sliceTotals(sql(), settings.predicate);
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
          }
        : (previous as ExportProgress);
      await db.exportJob.update({
        where: { id: job.id },
        data: { state: 'running', gate: json(progress.gate), progress: json(progress), error: null },
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
      const pageGate = async (frames: ExportFrame[]): Promise<GateReport | null> =>
        settings.gateMode === 'advisory' && frames.length
          ? evaluatePrivacyGate(
              sql(),
              settings.predicate,
              'advisory',
              frames.map((f) => f.frame_id),
            )
          : null;
      const read = (after: string | null) => {
        const page = readExportPage(sql(), settings.predicate, after, config.export.pageFrames).then(
          async (frames) => ({ frames, gate: await pageGate(frames) }),
        );
        // Awaited on the next turn; until then a failure must not count as unhandled.
        page.catch(() => undefined);
        return page;
      };
      // The next page (and its advisory gate) is read while this one is written: the database and
      // the encoding overlap.
      let next = read(cursor.after);
      for (;;) {
        const { frames, gate } = await next;
        if (!frames.length) break;
        next = read(frames[frames.length - 1]!.frame_id);
        const page = await writePage(job.id, settings, progress, cursor, frames);
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
      }
      return cursor;
    },

    /** Assembles the COCO files, `data.yaml` and the datasheet; records and signs the commit. */
    async finishExport(input: ExportWorkflowInput): Promise<ExportOutcome> {
      const job = await loadJob(input.jobId);
      if (job.state === 'succeeded' && job.commitId)
        return {
          job_id: job.id,
          state: 'succeeded',
          commit_id: job.commitId,
          gate: job.gate as unknown as GateReport,
        };
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
                  // Fragments go through as bytes: a page's annotations are megabytes.
                  const fragmentBytes = await store.getOrNull(
                    `${parts}coco/${split}/${kind}-${pageTag(page)}.json`,
                  );
                  if (!fragmentBytes?.length) continue;
                  if (!first) await append(',');
                  await append(fragmentBytes);
                  first = false;
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
      await db.exportJob.updateMany({
        where: { id: input.jobId, state: { in: ['queued', 'running'] } },
        data: { state: 'failed', error: input.error },
      });
      await publish('export.failed', { job_id: input.jobId, error: input.error });
    },
  };
}
