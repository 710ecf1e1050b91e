import { DEFAULT_DETECTOR, DETECTOR_VERSION, proposeLanes } from '../../core/lanes/detect';
import { sameLaneLimitPx } from '../../core/lanes/link';
import { meanRowDistance, type Point } from '../../core/lanes/polyline';
import type { Actor } from '../annotations/objects';
import { recordAudit } from '../audit';
import type { Db } from '../db';
import type { ObjectStore } from '../storage/object-store';
import { frameRgb } from './image';
import { frameOrThrow, json, laneOut, lockFrame } from './store';

export interface ProposeIn {
  roi_top: number;
  max_lanes: number;
  min_conf: number;
}

/**
 * POST /api/frames/{frame_id}/lanes/propose: the detector runs on the frame's stored image now;
 * its lanes (source proposed, type unknown) replace the frame's earlier proposals in one
 * transaction. A proposal lying on a lane a person drew or one propagated there is left out, so
 * proposing never doubles a lane.
 */
export async function proposeFrameLanes(
  db: Db,
  storage: ObjectStore,
  frameId: string,
  input: ProposeIn,
  actor: Actor,
) {
  const frame = await frameOrThrow(db, frameId);
  const image = await frameRgb(storage, frame, 'lane proposal');
  const params = {
    ...DEFAULT_DETECTOR,
    roiTop: input.roi_top,
    maxLanes: input.max_lanes,
    minConf: input.min_conf,
  };
  const proposals = proposeLanes(image, params);
  const limit = sameLaneLimitPx(frame.width);
  return db.$transaction(async (tx) => {
    await lockFrame(tx, frameId);
    const others = await tx.lane.findMany({ where: { frameId, source: { not: 'proposed' } } });
    const fresh = proposals.filter(
      (p) => !others.some((o) => meanRowDistance(o.points as Point[], p.points) <= limit),
    );
    const replaced = await tx.lane.deleteMany({ where: { frameId, source: 'proposed' } });
    const created = await tx.lane.createManyAndReturn({
      data: fresh.map((p) => ({
        frameId,
        sessionId: frame.sessionId,
        points: json(p.points),
        laneType: 'unknown',
        source: 'proposed',
        conf: p.conf,
        attrs: json({
          detector: DETECTOR_VERSION,
          markings: p.markings,
          colour: p.colour,
          evidence: p.evidence,
        }),
        createdBy: actor.userId,
      })),
    });
    await recordAudit(tx, {
      actorId: actor.userId,
      action: 'lanes.proposed',
      subjectType: 'frame',
      subjectId: frameId,
      detail: {
        detector: DETECTOR_VERSION,
        proposed: created.length,
        replaced: replaced.count,
        left_out: proposals.length - fresh.length,
      },
      requestId: actor.requestId,
    });
    const items = created.map(laneOut);
    return {
      frame_id: frameId,
      detector: DETECTOR_VERSION,
      params: { roi_top: params.roiTop, max_lanes: params.maxLanes, min_conf: params.minConf },
      replaced: replaced.count,
      left_out_existing: proposals.length - fresh.length,
      items,
      count: items.length,
    };
  });
}
