import { propagateFrameLanes } from '../../../activities/lanes/propagate';
import { proposeFrameLanes } from '../../../activities/lanes/propose';
import { createLane, deleteLane, editLane, listFrameLanes } from '../../../activities/lanes/store';
import { DETECTOR_VERSION } from '../../../core/lanes/detect';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../http/actor';
import { RouteGroup, uuidParams } from '../../http/route-group';
import { LaneEditIn, LaneIn, LanePropagateIn, LaneProposeIn } from './validators';

/**
 * Lane polylines on frames (docs/lanes.md). Drawing, editing, proposing and propagating are the
 * annotator's, like drawing objects; deleting a lane is the reviewer's, like deleting an object.
 */
export function createLaneRoutes(deps: AppDeps): RouteGroup {
  const { db, storage } = deps;
  const frameParams = uuidParams('frame_id');
  const laneParams = uuidParams('lane_id');
  const noFrame = { 404: 'no such frame' };
  return new RouteGroup('lanes')
    .get(
      '/api/frames/{frame_id}/lanes',
      {
        summary: "The frame's lanes, oldest first",
        access: 'annotator',
        params: frameParams,
        statuses: noFrame,
      },
      ({ params }) => listFrameLanes(db, params.frame_id),
    )
    .post(
      '/api/frames/{frame_id}/lanes',
      {
        summary:
          'A lane a person draws on the frame (source human): a polyline of frame pixels with its type. Audited',
        access: 'annotator',
        params: frameParams,
        body: { name: 'LaneIn', schema: LaneIn },
        successStatus: 201,
        statuses: { ...noFrame, 422: 'a point off the frame, or fewer than two distinct points' },
      },
      ({ params, body, principal, req }) => createLane(db, params.frame_id, body, actorOf(principal, req)),
    )
    .post(
      '/api/frames/{frame_id}/lanes/propose',
      {
        summary: `Runs the lane-marking detector (${DETECTOR_VERSION}) on the frame's stored image now; its lanes (source proposed, with conf) replace the frame's earlier proposals, leaving out any that lie on a lane already there. Audited`,
        access: 'annotator',
        params: frameParams,
        body: { name: 'LaneProposeIn', schema: LaneProposeIn },
        statuses: { ...noFrame, 422: 'the frame has no stored image' },
      },
      ({ params, body, principal, req }) =>
        proposeFrameLanes(db, storage, params.frame_id, body, actorOf(principal, req)),
    )
    .post(
      '/api/frames/{frame_id}/lanes/propagate',
      {
        summary:
          "Carries the frame's lanes to the next frame of its session (by timestamp), each refined against that frame's markings or copied, as source propagated in the same lane group (one is assigned when absent). Audited",
        access: 'annotator',
        params: frameParams,
        body: { name: 'LanePropagateIn', schema: LanePropagateIn },
        statuses: {
          ...noFrame,
          409: 'a lane changed while it was propagated',
          422: 'the frame has no lanes (or not the ones named), or is the last of its session',
        },
      },
      ({ params, body, principal, req }) =>
        propagateFrameLanes(db, storage, params.frame_id, body, actorOf(principal, req)),
    )
    .put(
      '/api/lanes/{lane_id}',
      {
        summary:
          "A person's edit of a lane: the fields given replace the stored ones (attrs whole), the lane becomes source human, version + 1; expected_version must be the stored version. Audited",
        access: 'annotator',
        params: laneParams,
        body: { name: 'LaneEditIn', schema: LaneEditIn },
        statuses: {
          404: 'no such lane',
          409: 'expected_version is not the stored version',
          422: 'a point off the frame, or fewer than two distinct points',
        },
      },
      ({ params, body, principal, req }) => editLane(db, params.lane_id, body, actorOf(principal, req)),
    )
    .delete(
      '/api/lanes/{lane_id}',
      {
        summary: 'Deletes a lane. Audited, with what it held',
        access: 'reviewer',
        params: laneParams,
        statuses: { 404: 'no such lane' },
      },
      ({ params, principal, req }) => deleteLane(db, params.lane_id, actorOf(principal, req)),
    );
}
