import fs from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { fineTuneDetectorHead, type LabelledImage } from '../activities/training/head-finetune';
import type { ExternalTrainingJob } from '../activities/training/external';
import { CocoSplitFile, trainingItems } from '../core/training-jobs/coco';
import { REPO_ROOT } from './stack';

/**
 * An external trainer that speaks the drivelab.training/1 contract (docs/training.md) and trains
 * with the built-in head fine-tuner: the command reads the job on stdin and writes its lines to
 * stdout; `trainThroughContract` serves the same for an HTTP endpoint. It reads the dataset and the
 * parent from local paths (command) or presigned URLs (endpoint) and delivers the trained file the
 * same way, so the tests exercise the contract end to end with a real trainer behind it.
 */

async function fetchBytes(url: string): Promise<Buffer> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`GET ${url.split('?')[0]} answered ${res.status}`);
  return Buffer.from(await res.arrayBuffer());
}

/** A file of the dataset, from its folder or its presigned URL. */
function datasetReader(job: ExternalTrainingJob): (file: string) => Promise<Buffer> {
  const { dir, files } = job.dataset;
  if (dir) return (file) => fs.readFile(path.join(dir, file));
  const urls = new Map((files ?? []).map((f) => [f.path, f.url]));
  return (file) => {
    const url = urls.get(file);
    if (!url) throw new Error(`the job names no URL for ${file}`);
    return fetchBytes(url);
  };
}

async function split(
  job: ExternalTrainingJob,
  read: (file: string) => Promise<Buffer>,
  name: 'train' | 'val',
): Promise<LabelledImage[]> {
  const coco = CocoSplitFile.parse(
    JSON.parse((await read(`annotations/instances_${name}.json`)).toString('utf8')),
  );
  const { items } = trainingItems(coco, job.dataset.class_map);
  return Promise.all(
    items.map(async (it) => ({
      id: path.parse(it.fileName).name,
      jpeg: await read(`images/${name}/${it.fileName}`),
      boxes: it.boxes,
    })),
  );
}

/** Trains the job, writing each contract line through `write`; ends with the final line. */
export async function trainThroughContract(
  job: ExternalTrainingJob,
  write: (line: string) => void,
): Promise<void> {
  const read = datasetReader(job);
  const [train, val, parent] = await Promise.all([
    split(job, read, 'train'),
    split(job, read, 'val'),
    job.parent.path ? fs.readFile(job.parent.path) : fetchBytes(job.parent.url!),
  ]);
  write('external trainer: training with the built-in head fine-tuner'); // a log line, which the contract allows
  const c = job.config;
  const result = await fineTuneDetectorHead({
    parent,
    train,
    val,
    config: {
      epochs: c.epochs,
      learningRate: c.learning_rate,
      batchSize: c.batch_size,
      heads: c.heads,
      anchorL2: c.anchor_l2,
      seed: c.seed,
    },
    ...(job.resume_from ? { resumeFrom: job.resume_from.checkpoint as never } : {}),
    onEpoch: (r) => {
      write(
        JSON.stringify({
          epoch: r.epoch,
          epochs: r.epochs,
          train_loss: r.trainLoss,
          val_loss: r.valLoss,
          metrics: { map50: r.metrics.map50, ap50_by_class: r.metrics.ap50ByClass },
          checkpoint: r.checkpoint,
        }),
      );
      return Promise.resolve();
    },
  });
  const metrics = { map50: result.metrics.trained.map50, parent_map50: result.metrics.parent.map50 };
  if (job.output.path) {
    await fs.writeFile(job.output.path, result.onnx);
    write(JSON.stringify({ output: job.output.path, metrics }));
  } else {
    const put = await fetch(job.output.url!, { method: 'PUT', body: Buffer.from(result.onnx) });
    if (!put.ok) throw new Error(`PUT of the trained file answered ${put.status}`);
    write(JSON.stringify({ output: 'url', metrics }));
  }
}

/** The shell command that runs this file as the external trainer (what APP_TRAINING__EXTERNAL_COMMAND names). */
export function externalTrainerCommand(): string {
  const loader = pathToFileURL(path.join(REPO_ROOT, 'node_modules/tsx/dist/loader.mjs')).href;
  return `'${process.execPath}' --import '${loader}' '${path.join(REPO_ROOT, 'testkit/external-trainer.ts')}'`;
}

async function main(): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  const job = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ExternalTrainingJob;
  await trainThroughContract(job, (line) => process.stdout.write(`${line}\n`));
}

if (require.main === module)
  main().catch((err: unknown) => {
    process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  });
