import fs from 'node:fs/promises';
import path from 'node:path';
import { UnavailableError } from '../../core/errors';
import { trainingConfigIn, type TrainingConfig } from '../../core/training-jobs/config';
import type { AppConfig } from '../../core/config';
import type { DatasetCommit, Model, TrainingJob } from '../../generated/prisma/client';
import { readObject } from '../inspector/frame-objects';
import type { ObjectStore } from '../storage/object-store';
import {
  commitObjectKey,
  copyTrainingFiles,
  loadLabelledImages,
  trainingFilePaths,
  TRAINING_SPLITS,
  type CommitTrainingData,
} from './dataset';
import {
  EXTERNAL_CONTRACT,
  ExternalTrainerError,
  PARENT_CLASSES,
  runExternalCommand,
  runExternalEndpoint,
  type EpochLine,
  type ExternalTrainingJob,
} from './external';
import { fineTuneDetectorHead, HEAD_FINETUNE_DEFAULTS, type TrainingCheckpoint } from './head-finetune';

/**
 * The two trainers behind one shape (docs/training.md): the built-in head fine-tuner in this
 * process, and an external trainer through its command or endpoint contract. Each reports every
 * epoch (with the state a later attempt resumes from) and ends with the trained ONNX file.
 */

/** One epoch as the job records it; AP per class keyed by the dataset's category names. */
export interface EpochRecord {
  epoch: number;
  epochs: number;
  trainLoss: number;
  valLoss: number | null;
  map50: number | null;
  ap50ByClass: Record<string, number>;
  /** What an attempt that resumes after this epoch needs; absent when the trainer gave none. */
  state: unknown;
}

export interface TrainerInput {
  job: TrainingJob;
  config: TrainingConfig;
  commit: DatasetCommit;
  data: CommitTrainingData;
  parent: Model;
  parentBytes: Buffer;
  /** The state saved after epoch `epoch` by an earlier attempt. */
  resume: { epoch: number; state: unknown } | null;
  onEpoch: (record: EpochRecord) => Promise<void>;
  signal: AbortSignal;
  /** A private folder for this attempt's files, removed after it. */
  workDir: string;
}

export interface TrainerResult {
  onnx: Uint8Array;
  metrics: Record<string, unknown>;
}

/** AP by the parent's class index → by the dataset's category name (the names people read). */
function byCategoryName(
  ap: Record<string, number>,
  classMap: Record<string, number>,
): Record<string, number> {
  const names = new Map(Object.entries(classMap).map(([name, index]) => [String(index), name]));
  return Object.fromEntries(Object.entries(ap).map(([k, v]) => [names.get(k) ?? k, v]));
}

const validation = (
  m: { map50: number; ap50ByClass: Record<string, number> },
  classMap: Record<string, number>,
) => ({
  map50: m.map50,
  ap50_by_class: byCategoryName(m.ap50ByClass, classMap),
});

/** A job's configuration defaults: the built-in trainer's own (docs/training-trainer.md). */
export const TRAINING_DEFAULTS: TrainingConfig = {
  epochs: HEAD_FINETUNE_DEFAULTS.epochs,
  learning_rate: HEAD_FINETUNE_DEFAULTS.learningRate,
  batch_size: HEAD_FINETUNE_DEFAULTS.batchSize,
  heads: HEAD_FINETUNE_DEFAULTS.heads,
  anchor_l2: HEAD_FINETUNE_DEFAULTS.anchorL2,
  seed: HEAD_FINETUNE_DEFAULTS.seed,
};

/** A request's training configuration: what it leaves out takes the defaults. */
export const TrainingConfigIn = trainingConfigIn(TRAINING_DEFAULTS);

export async function runBuiltinTrainer(storage: ObjectStore, input: TrainerInput): Promise<TrainerResult> {
  const { data, commit, config } = input;
  const [train, val] = await Promise.all(
    TRAINING_SPLITS.map((split) => loadLabelledImages(storage, commit, split, data.items[split])),
  );
  const classMap = data.summary.class_map;
  const result = await fineTuneDetectorHead({
    parent: input.parentBytes,
    train: train!,
    val: val!,
    config: {
      epochs: config.epochs,
      learningRate: config.learning_rate,
      batchSize: config.batch_size,
      heads: config.heads,
      anchorL2: config.anchor_l2,
      seed: config.seed,
    },
    ...(input.resume ? { resumeFrom: input.resume.state as TrainingCheckpoint } : {}),
    onEpoch: (r) =>
      input.onEpoch({
        epoch: r.epoch,
        epochs: r.epochs,
        trainLoss: r.trainLoss,
        valLoss: r.valLoss,
        map50: r.metrics.map50,
        ap50ByClass: byCategoryName(r.metrics.ap50ByClass, classMap),
        state: r.checkpoint,
      }),
    shouldStop: () => input.signal.aborted,
  });
  return {
    onnx: result.onnx,
    metrics: {
      parent: validation(result.metrics.parent, classMap),
      trained: validation(result.metrics.trained, classMap),
      train_images: result.metrics.trainImages,
      val_images: result.metrics.valImages,
      train_boxes: result.metrics.trainBoxes,
    },
  };
}

/** Presigned URLs live this long: a job may queue and train for hours. */
const URL_SECONDS = 24 * 3600;

/**
 * Runs the configured external trainer: the command when one is configured (the dataset and the
 * parent as local files), else the endpoint (as presigned URLs, the output PUT to one).
 */
export async function runExternalTrainer(
  deps: { storage: ObjectStore; config: AppConfig },
  input: TrainerInput,
): Promise<TrainerResult> {
  const { storage } = deps;
  const { externalCommand, externalEndpoint } = deps.config.training;
  if (!externalCommand && !externalEndpoint)
    throw new UnavailableError(
      'the external trainer is no longer configured: set APP_TRAINING__EXTERNAL_COMMAND or APP_TRAINING__EXTERNAL_ENDPOINT',
    );
  const { job, commit, data } = input;
  const local = Boolean(externalCommand);
  const models = storage.bucket('models');
  const outputKey = `training/${job.id}/external-output.onnx`;
  const document: ExternalTrainingJob = {
    contract: EXTERNAL_CONTRACT,
    job_id: job.id,
    task: job.task,
    dataset: { commit_id: commit.commitId, dir: null, files: null, class_map: data.summary.class_map },
    parent: {
      model_version: input.parent.modelVersion,
      format: input.parent.format ?? 'yolox',
      classes: PARENT_CLASSES,
      path: null,
      url: null,
    },
    config: input.config,
    resume_from: input.resume ? { epoch: input.resume.epoch, checkpoint: input.resume.state } : null,
    output: { path: null, url: null },
  };
  if (local) {
    document.dataset.dir = path.join(input.workDir, 'dataset');
    document.parent.path = path.join(input.workDir, 'parent.onnx');
    document.output.path = path.join(input.workDir, 'model.onnx');
    await Promise.all([
      copyTrainingFiles(storage, commit, data.items, document.dataset.dir),
      fs.writeFile(document.parent.path, input.parentBytes),
    ]);
  } else {
    const parentKey = `training/${job.id}/parent.onnx`;
    await storage.client.putObject(models, parentKey, input.parentBytes, input.parentBytes.length);
    const exportsBucket = storage.bucket('exports');
    document.dataset.files = await Promise.all(
      trainingFilePaths(data.items).map(async (p) => ({
        path: p,
        url: await storage.client.presignedGetObject(exportsBucket, commitObjectKey(commit, p), URL_SECONDS),
      })),
    );
    document.parent.url = await storage.client.presignedGetObject(models, parentKey, URL_SECONDS);
    document.output.url = await storage.client.presignedPutObject(models, outputKey, URL_SECONDS);
  }
  const onEpoch = (line: EpochLine) =>
    input.onEpoch({
      epoch: line.epoch,
      epochs: line.epochs,
      trainLoss: line.train_loss,
      valLoss: line.val_loss,
      map50: line.metrics.map50,
      ap50ByClass: line.metrics.ap50_by_class,
      state: line.checkpoint,
    });
  const final = local
    ? await runExternalCommand(externalCommand, document, {
        onEpoch,
        signal: input.signal,
        cwd: input.workDir,
      })
    : await runExternalEndpoint(externalEndpoint, document, { onEpoch, signal: input.signal });
  const onnx = local
    ? await fs.readFile(path.resolve(input.workDir, final.output)).catch(() => {
        throw new ExternalTrainerError(
          `the external trainer named ${final.output} as its output, and no such file exists`,
        );
      })
    : await readObject(storage, { bucket: models, key: outputKey }).catch(() => {
        throw new ExternalTrainerError(
          `the external trainer endpoint did not PUT the trained file to its output URL`,
        );
      });
  // The trainer's own figures: this process did not measure them.
  return { onnx, metrics: { trained: final.metrics, reported_by: 'external' } };
}
