import fs from 'node:fs/promises';
import path from 'node:path';
import { MAX_SPLIT_IMAGES } from '../../core/training-jobs/config';
import { CocoSplitFile, classMapOf, trainingItems, type TrainingItem } from '../../core/training-jobs/coco';
import { RefusedError } from '../../core/errors';
import { mapLimit } from '../../core/map-limit';
import type { DatasetCommit } from '../../generated/prisma/client';
import { commitFiles } from '../datasets/read';
import { readObject } from '../inspector/frame-objects';
import type { ObjectStore } from '../storage/object-store';
import type { LabelledImage } from './head-finetune';

/**
 * A dataset commit as training data (docs/training.md): its COCO train and val splits and their
 * images, as an export with COCO and images writes them (docs/datasets.md).
 */

export const TRAINING_SPLITS = ['train', 'val'] as const;
export type TrainingSplit = (typeof TRAINING_SPLITS)[number];

export const cocoPath = (split: TrainingSplit): string => `annotations/instances_${split}.json`;
const imagePath = (split: TrainingSplit, fileName: string): string => `images/${split}/${fileName}`;

/**
 * Refuses by name a commit that cannot be trained on: without a COCO file for the train or the val
 * split (the trainer validates on val), or exported without images. Reads only the commit row.
 */
export function checkTrainableCommit(commit: Pick<DatasetCommit, 'commitId' | 'files'>): void {
  const paths = commitFiles(commit).map((f) => f.path);
  for (const split of TRAINING_SPLITS) {
    if (!paths.includes(cocoPath(split)))
      throw new RefusedError(
        `dataset commit ${commit.commitId} has no COCO ${split} split (${cocoPath(split)}); export it with the coco format and a split that gives ${split} frames`,
      );
    if (!paths.some((p) => p.startsWith(`images/${split}/`)))
      throw new RefusedError(
        `dataset commit ${commit.commitId} holds no ${split} images (images/${split}/); export it with include_images`,
      );
  }
}

/** The exports-bucket key of a file of the commit. */
export const commitObjectKey = (commit: Pick<DatasetCommit, 'prefix'>, file: string) =>
  `${commit.prefix}${file}`;

async function readCommitFile(storage: ObjectStore, commit: DatasetCommit, file: string): Promise<Buffer> {
  return readObject(storage, { bucket: storage.bucket('exports'), key: commitObjectKey(commit, file) });
}

/** Both COCO splits of a commit, checked against the COCO shape. */
export async function readCocoSplits(
  storage: ObjectStore,
  commit: DatasetCommit,
): Promise<Record<TrainingSplit, CocoSplitFile>> {
  checkTrainableCommit(commit);
  const read = async (split: TrainingSplit) => {
    const parsed = CocoSplitFile.safeParse(
      JSON.parse((await readCommitFile(storage, commit, cocoPath(split))).toString('utf8')),
    );
    if (!parsed.success)
      throw new RefusedError(
        `dataset commit ${commit.commitId}: ${cocoPath(split)} is not a COCO detection file (${parsed.error.issues[0]?.message ?? 'malformed'})`,
      );
    if (parsed.data.images.length > MAX_SPLIT_IMAGES)
      throw new RefusedError(
        `dataset commit ${commit.commitId}: the ${split} split holds ${parsed.data.images.length} images; a training job takes at most ${MAX_SPLIT_IMAGES} per split`,
      );
    if (!parsed.data.images.length)
      throw new RefusedError(`dataset commit ${commit.commitId}: the ${split} split holds no image`);
    return parsed.data;
  };
  const [train, val] = await Promise.all([read('train'), read('val')]);
  return { train, val };
}

/** What training will see of a commit: per split, images and trainable boxes, and what is left out and why. */
export interface DatasetSummary {
  class_map: Record<string, number>;
  /** Category name → why the parent cannot learn it. */
  unmapped: Record<string, string>;
  splits: Record<TrainingSplit, { images: number; boxes: number; skipped: Record<string, number> }>;
}

export interface CommitTrainingData {
  summary: DatasetSummary;
  items: Record<TrainingSplit, TrainingItem[]>;
}

/** The splits' images and boxes mapped to the parent's classes, without reading the images. */
export async function planTrainingData(
  storage: ObjectStore,
  commit: DatasetCommit,
): Promise<CommitTrainingData> {
  const files = await readCocoSplits(storage, commit);
  const { classMap, unmapped } = classMapOf([files.train, files.val]);
  const listed = new Set(commitFiles(commit).map((f) => f.path));
  const items = {} as CommitTrainingData['items'];
  const splits = {} as DatasetSummary['splits'];
  for (const split of TRAINING_SPLITS) {
    const got = trainingItems(files[split], classMap);
    const missing = got.items.find((it) => !listed.has(imagePath(split, it.fileName)));
    if (missing)
      throw new RefusedError(
        `dataset commit ${commit.commitId}: image ${imagePath(split, missing.fileName)} of its COCO ${split} split is not in the commit; export it with include_images`,
      );
    items[split] = got.items;
    splits[split] = { images: got.items.length, boxes: got.boxes, skipped: got.skipped };
  }
  for (const split of TRAINING_SPLITS)
    if (!splits[split].boxes)
      throw new RefusedError(
        `dataset commit ${commit.commitId}: its ${split} split has no box of a class the parent outputs (left out: ${Object.keys(splits[split].skipped).join(', ') || 'none'})`,
      );
  return { summary: { class_map: classMap, unmapped, splits }, items };
}

/** The images of a split with their boxes, read from the exports bucket. */
export async function loadLabelledImages(
  storage: ObjectStore,
  commit: DatasetCommit,
  split: TrainingSplit,
  items: readonly TrainingItem[],
): Promise<LabelledImage[]> {
  return mapLimit(items, 8, async (it) => ({
    id: path.parse(it.fileName).name,
    jpeg: await readCommitFile(storage, commit, imagePath(split, it.fileName)),
    boxes: it.boxes,
  }));
}

/** The files training reads, by their path in the commit: the COCO splits and their images. */
export const trainingFilePaths = (items: CommitTrainingData['items']): string[] =>
  TRAINING_SPLITS.flatMap((split) => [
    cocoPath(split),
    ...items[split].map((it) => imagePath(split, it.fileName)),
  ]);

/** Copies the files training reads into `dir`, keeping the commit's layout. */
export async function copyTrainingFiles(
  storage: ObjectStore,
  commit: DatasetCommit,
  items: CommitTrainingData['items'],
  dir: string,
): Promise<void> {
  await mapLimit(trainingFilePaths(items), 8, async (file) => {
    const to = path.join(dir, file);
    await fs.mkdir(path.dirname(to), { recursive: true });
    await fs.writeFile(to, await readCommitFile(storage, commit, file));
  });
}
