import { randomUUID } from 'node:crypto';
import type { Client } from '@temporalio/client';
import { CHALLENGER_SPLIT } from '../activities/training/challenger';
import type { AppDeps } from '../api/deps';
import { splitOf } from '../core/export/splits';
import type { Box } from '../core/geometry';
import type { DatasetCommit } from '../generated/prisma/client';
import { createCommitFixture } from './commits';
import type { TestApi } from './api';
import { createVehicleSession, vehicleFrames, type VehicleFrame, type VehicleScene } from './media/vehicles';

/**
 * Scenes of the e-bike story (vehicleFrames options, 640 px wide): a fleet whose e-bikes the shipped
 * detector calls motorcycles, labelled `bicycle` by its reviewers. Training sees `train`; the
 * held-out scenes place and scale the vehicles in ways training never saw.
 */
export const E_BIKE_SCENES: { train: VehicleScene[]; heldOut: VehicleScene[] } = {
  train: [
    { motorcycleWidth: 0.22, step: 0.03, motorcycleGap: 0 },
    { motorcycleWidth: 0.3, step: 0.03, busHeight: 0.8 },
    { motorcycleWidth: 0.38, step: 0.02, busHeight: 0.9, motorcycleLift: 0.1 },
    { motorcycleWidth: 0.18, step: 0.04, busHeight: 0.7, motorcycleLift: 0.2 },
  ],
  heldOut: [
    { motorcycleWidth: 0.26, step: 0.035, motorcycleGap: 0.01, busHeight: 0.85, motorcycleLift: 0.05 },
    { motorcycleWidth: 0.34, step: 0.025, busHeight: 0.75, motorcycleLift: 0.15 },
  ],
};

/** `perScene` frames of each scene, 640 px wide, in scene order. */
export async function sceneFrames(
  scenes: readonly VehicleScene[],
  perScene: number,
): Promise<VehicleFrame[]> {
  const frames: VehicleFrame[] = [];
  for (const scene of scenes) frames.push(...(await vehicleFrames(perScene, { width: 640, ...scene })));
  return frames;
}

/** A session id whose drive falls in `split` of a challenger's export (splits are drawn per session id). */
export function idInChallengerSplit(split: 'train' | 'val'): string {
  for (;;) {
    const id = randomUUID();
    if (splitOf({ ...CHALLENGER_SPLIT }, id) === split) return id;
  }
}

/**
 * A drive of the e-bike story people labelled already (buses, and e-bikes as `bicycle`, human and
 * accepted), in `split` of a challenger's export: training data a campaign or flywheel run exports.
 */
export async function labelledEBikeDrive(
  deps: Pick<AppDeps, 'db' | 'storage'>,
  scenes: readonly VehicleScene[],
  split: 'train' | 'val',
) {
  const { db } = deps;
  const classId = async (name: string) => (await db.ontologyClass.findUniqueOrThrow({ where: { name } })).id;
  const [bus, bicycle] = [await classId('bus'), await classId('bicycle')];
  const frames = await sceneFrames(scenes, 2);
  const drive = await createVehicleSession(deps, frames, { id: idInChallengerSplit(split), redacted: true });
  for (const [i, f] of frames.entries())
    await db.annoObject.createMany({
      data: [
        { frameId: drive.frames[i]!.id, classId: bus, bbox: f.truth.bus, source: 'human', state: 'accepted' },
        {
          frameId: drive.frames[i]!.id,
          classId: bicycle,
          bbox: f.truth.motorcycle,
          source: 'human',
          state: 'accepted',
        },
      ],
    });
  return drive;
}

/**
 * The e-bike story's gold set: a held-out drive whose buses and e-bikes (`bicycle`) a reviewer drew
 * through the API, sealed. Answers the gold set and its drive's session.
 */
export async function sealEBikeGold(
  api: Pick<TestApi, 'call' | 'deps'>,
  reviewerToken: string,
  name: string,
): Promise<{ goldId: string; sessionId: string }> {
  const goldFrames = await sceneFrames(E_BIKE_SCENES.heldOut, 2);
  const gold = await createVehicleSession(api.deps, goldFrames, { name: `${name} drive`, redacted: true });
  for (const [i, f] of goldFrames.entries())
    for (const [cls, box] of [
      ['bus', f.truth.bus],
      ['bicycle', f.truth.motorcycle],
    ] as const) {
      const drawn = await api.call('POST', `/api/frames/${gold.frames[i]!.id}/objects`, {
        token: reviewerToken,
        body: { class_name: cls, bbox: box },
      });
      if (drawn.status !== 201) throw new Error(`gold box: ${drawn.status} ${JSON.stringify(drawn.body)}`);
    }
  const sealed = await api.call('POST', '/api/quality/gold/seal', {
    token: reviewerToken,
    body: { name, frame_ids: gold.frames.map((f) => f.id) },
  });
  if (sealed.status !== 201) throw new Error(`seal: ${sealed.status} ${JSON.stringify(sealed.body)}`);
  return { goldId: sealed.body.id as string, sessionId: gold.session.id };
}

/**
 * A dataset commit to train on, laid out as an export with COCO and images writes it
 * (docs/datasets.md): real photographs of a bus and a motorcycle whose boxes are known by
 * construction, split into train and val, plus (unless `pothole: false`) one pothole box per train
 * image — a class the COCO-80 parent cannot output, which training must report and leave out. The
 * frames are `train` + `val` frames of one scene, or `perScene` frames of each of `scenes`;
 * `motorcycleLabel` is the class the reviewers gave the motorcycle.
 */
export async function createTrainingCommit(
  deps: Pick<AppDeps, 'db' | 'storage' | 'config'>,
  opts: {
    name?: string;
    train: number;
    val: number;
    width?: number;
    scenes?: { train: VehicleScene[]; val: VehicleScene[]; perScene: number };
    motorcycleLabel?: string;
    pothole?: boolean;
  },
): Promise<DatasetCommit> {
  const splits = opts.scenes
    ? {
        train: await sceneFrames(opts.scenes.train, opts.scenes.perScene),
        val: await sceneFrames(opts.scenes.val, opts.scenes.perScene),
      }
    : await (async () => {
        const frames = await vehicleFrames(opts.train + opts.val, { width: opts.width ?? 416, step: 0.04 });
        return { train: frames.slice(0, opts.train), val: frames.slice(opts.train) };
      })();
  const motorcycle = opts.motorcycleLabel ?? 'motorcycle';
  const classes = await deps.db.ontologyClass.findMany({
    where: { name: { in: ['bus', motorcycle, 'pothole'] } },
  });
  const idOf = (name: string) => classes.find((c) => c.name === name)!.id;
  const files: Record<string, Buffer> = {};
  const objects: Array<{ object_id: string; class_name: string; split: string; frame_id: string }> = [];
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
        [motorcycle, f.truth.motorcycle],
      ];
      if (split === 'train' && opts.pothole !== false)
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
