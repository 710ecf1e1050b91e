import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { AppDeps } from '../api/deps';
import type { Box } from '../core/geometry';
import type { DatasetCommit } from '../generated/prisma/client';
import { createCommitFixture } from './commits';
import { vehicleFrames } from './media/vehicles';

/**
 * A dataset commit to train on, laid out as an export with COCO and images writes it
 * (docs/datasets.md): real photographs of a bus and a motorcycle whose boxes are known by
 * construction, split into train and val, plus one pothole box per train image — a class the
 * COCO-80 parent cannot output, which training must report and leave out.
 */
export async function createTrainingCommit(
  deps: Pick<AppDeps, 'db' | 'storage' | 'config'>,
  opts: { name?: string; train: number; val: number; width?: number },
): Promise<DatasetCommit> {
  const frames = await vehicleFrames(opts.train + opts.val, { width: opts.width ?? 416, step: 0.04 });
  const classes = await deps.db.ontologyClass.findMany({
    where: { name: { in: ['bus', 'motorcycle', 'pothole'] } },
  });
  const idOf = (name: string) => classes.find((c) => c.name === name)!.id;
  const files: Record<string, Buffer> = {};
  const objects: Array<{ object_id: string; class_name: string; split: string; frame_id: string }> = [];
  const splits = { train: frames.slice(0, opts.train), val: frames.slice(opts.train) };
  for (const [split, list] of Object.entries(splits)) {
    if (!list.length) continue;
    const images: object[] = [];
    const annotations: object[] = [];
    list.forEach((f, i) => {
      const frameId = randomUUID();
      files[`images/${split}/${frameId}.jpg`] = f.jpeg;
      images.push({
        id: i + 1,
        file_name: `${frameId}.jpg`,
        width: f.width,
        height: f.height,
        frame_id: frameId,
      });
      const boxes: Array<[string, Box]> = [
        ['bus', f.truth.bus],
        ['motorcycle', f.truth.motorcycle],
      ];
      if (split === 'train')
        boxes.push(['pothole', [f.width * 0.7, f.height * 0.05, f.width * 0.8, f.height * 0.12]]);
      for (const [name, b] of boxes) {
        annotations.push({
          id: annotations.length + 1,
          image_id: i + 1,
          category_id: idOf(name),
          bbox: [b[0], b[1], b[2] - b[0], b[3] - b[1]],
          area: (b[2] - b[0]) * (b[3] - b[1]),
          iscrowd: 0,
        });
        objects.push({ object_id: randomUUID(), class_name: name, split, frame_id: frameId });
      }
    });
    files[`annotations/instances_${split}.json`] = Buffer.from(
      JSON.stringify({
        images,
        annotations,
        categories: classes.map((c) => ({ id: c.id, name: c.name, supercategory: c.l1 })),
      }),
    );
  }
  return createCommitFixture(deps, {
    name: opts.name ?? `training-${randomUUID().slice(0, 8)}`,
    objects,
    files,
  });
}

/**
 * When an activity of a workflow started and completed (ms), from its history: the span it held a
 * worker slot for.
 */
export async function activitySpan(
  client: Client,
  workflowId: string,
  activity: string,
): Promise<readonly [number, number]> {
  const events = (await client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  const scheduled = events.find(
    (e) => e.activityTaskScheduledEventAttributes?.activityType?.name === activity,
  );
  if (!scheduled) throw new Error(`${workflowId} scheduled no ${activity}`);
  const of = (attrs: { scheduledEventId?: { toString(): string } | null } | null | undefined) =>
    attrs?.scheduledEventId?.toString() === scheduled.eventId!.toString();
  const at = (e: (typeof events)[number] | undefined) => {
    if (!e?.eventTime) throw new Error(`${workflowId}: ${activity} did not start and complete`);
    return Number(e.eventTime.seconds) * 1000 + (e.eventTime.nanos ?? 0) / 1e6;
  };
  return [
    at(events.find((e) => of(e.activityTaskStartedEventAttributes))),
    at(events.find((e) => of(e.activityTaskCompletedEventAttributes))),
  ] as const;
}
