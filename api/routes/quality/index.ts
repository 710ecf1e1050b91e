import { createMaskStore } from '../../../activities/annotations/masks';
import { goldSetOut, listGoldSets, measureGold, sealGold } from '../../../activities/quality/gold';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../http/actor';
import { RouteGroup, uuidParams } from '../../http/route-group';
import { agreementOfStored } from '../../../activities/quality/agreement';
import { sessionAttrAudit } from '../../../activities/quality/attr-audit';
import { fitCalibrationFromStore } from '../../../activities/quality/calibration';
import { qualitySheet } from '../../../activities/quality/sheet';
import {
  applyTrackGapFill,
  applyTrackRelabelBackfill,
  planTrackGapFill,
  planTrackRelabelBackfill,
} from '../../../activities/quality/track-quality';
import { MIN_CALIBRATION_SAMPLES } from '../../../core/quality/calibration-fit';
import {
  CalibrateFitIn,
  GoldMeasureIn,
  GoldSealIn,
  GoldSetsQuery,
  IaaIn,
  SheetQuery,
  TrackGapFillIn,
  TrackGapFillQuery,
  TrackRelabelBackfillIn,
  TrackRelabelBackfillQuery,
} from './validators';

/** The `quality` group: gold sets, agreement, calibration, sheets and audits (docs/quality.md). */
export function createQualityRoutes(deps: AppDeps): RouteGroup {
  const { db, storage } = deps;
  const masks = createMaskStore(storage);
  const group = new RouteGroup('quality')
    .post(
      '/api/quality/gold/seal',
      {
        summary:
          'Seal a gold set: the accepted objects of human-verified frames, frozen with a content hash (later edits to the live objects do not change it)',
        access: 'reviewer',
        body: { name: 'GoldSealIn', schema: GoldSealIn },
        successStatus: 201,
        statuses: {
          404: 'no such object, frame or session',
          422: 'a frame is not human-verified, or a frame would be sealed partly',
        },
      },
      async ({ body, principal, req }) =>
        goldSetOut(await sealGold(db, masks, body, actorOf(principal, req))),
    )
    .get(
      '/api/quality/gold-sets',
      {
        summary:
          'Gold sets, newest first; with verify=true each says whether its frozen items still match its content hash',
        access: 'annotator',
        query: GoldSetsQuery,
      },
      async ({ query }) => ({ items: await listGoldSets(db, query) }),
    )
    .post(
      '/api/quality/gold/{gold_id}/measure',
      {
        summary:
          'An inference run against the gold set: per-class precision, recall and AP at iou_thr with seeded bootstrap intervals over frames (BootstrapIn defaults); recorded as an eval operation. A reconstructed run is refused',
        access: 'annotator',
        params: uuidParams('gold_id'),
        body: { name: 'GoldMeasureIn', schema: GoldMeasureIn },
        statuses: {
          404: 'no such gold set or run',
          409: 'the run is not completed',
          422: 'reconstructed run',
        },
      },
      async ({ params, body, principal, req }) =>
        measureGold(db, params.gold_id, body, actorOf(principal, req)),
    )
    .post(
      '/api/quality/track-gap-fill',
      {
        summary:
          'Fill the gaps inside tracks (frames between two anchors holding no object of the track, at most max_gap long) by interpolation, track by track: fills get source interpolated and go to review; a track changed meanwhile is reported conflict and left',
        access: 'reviewer',
        body: { name: 'TrackGapFillIn', schema: TrackGapFillIn },
        statuses: { 404: 'no such session or track' },
      },
      async ({ body, principal, req }) => applyTrackGapFill(db, body, body.max_gap, actorOf(principal, req)),
    )
    .get(
      '/api/quality/track-gap-fill/plan',
      {
        summary:
          'The gaps inside tracks and what a gap fill would do with each: fill, or skip with why (too_long, class_mismatch, unmatched_polygons); writes nothing',
        access: 'reviewer',
        query: TrackGapFillQuery,
        statuses: { 404: 'no such session or track' },
      },
      async ({ query }) => planTrackGapFill(db, query, query.max_gap),
    )
    .post(
      '/api/quality/track-relabel-backfill',
      {
        summary:
          "Give each track's machine objects the class people gave the track (the majority of its human objects), as one track relabel per track: the class-move rule, one review batch and one undoable track-relabel run each",
        access: 'reviewer',
        body: { name: 'TrackRelabelBackfillIn', schema: TrackRelabelBackfillIn },
        statuses: { 404: 'no such session or track' },
      },
      async ({ body, principal, req }) =>
        applyTrackRelabelBackfill(db, masks, body, body.reviewer, actorOf(principal, req)),
    )
    .get(
      '/api/quality/track-relabel-backfill/plan',
      {
        summary:
          'Per track, the class people gave it, their votes, and the machine objects a backfill would move — or why it would skip the track (no_human_label, humans_disagree, nothing_to_move, implausible_move); writes nothing',
        access: 'reviewer',
        query: TrackRelabelBackfillQuery,
        statuses: { 404: 'no such session or track' },
      },
      async ({ query }) => planTrackRelabelBackfill(db, query),
    );
  return addMeasureRoutes(group, deps);
}

// ---- Agreement, calibration, sheet and attribute audit (docs/quality-measure.md) ----

function addMeasureRoutes(group: RouteGroup, deps: AppDeps): RouteGroup {
  const { db } = deps;
  return group
    .post(
      '/api/quality/iaa',
      {
        summary:
          "Inter-annotator agreement over stored objects of frames several people labelled (a session or frame_ids): an object's annotator is its creator by the audit log (or its job_id); the AgreementIn report with per-class agreement; recorded as eval operation `iaa`",
        access: 'annotator',
        body: { name: 'IaaIn', schema: IaaIn },
        statuses: {
          404: 'no such session or frame',
          422: 'no frame holds objects of two annotators, or too many objects',
        },
      },
      async ({ body, principal, req }) => agreementOfStored(db, body, actorOf(principal, req)),
    )
    .post(
      '/api/quality/calibrate/fit',
      {
        summary: `Fit per-class confidence calibration (temperature or isotonic) from human verdicts on machine objects of a gold set or a session (CalibrateFitIn); ECE and reliability before and after; with activate, it becomes the one active calibration that auto-accept routing and threshold fits use. Refused under ${MIN_CALIBRATION_SAMPLES} verdicts`,
        access: 'reviewer',
        body: { name: 'CalibrateFitIn', schema: CalibrateFitIn },
        successStatus: 201,
        statuses: {
          404: 'no such gold set or session',
          409: 'the gold set is not sealed',
          422: `fewer than ${MIN_CALIBRATION_SAMPLES} verdicts`,
        },
      },
      async ({ body, principal, req }) =>
        fitCalibrationFromStore(
          db,
          {
            gold_id: body.gold_id,
            session_id: body.session_id,
            method: body.method,
            activate: body.activate,
          },
          actorOf(principal, req),
        ),
    )
    .get(
      '/api/quality/sheet',
      {
        summary:
          "The quality sheet of the corpus or of a curation slice: per class and in total, objects, human-verified and auto-accept shares, control precision (Laplace, from 25 verdicts), gold coverage, open error candidates, the latest agreement and the active calibration's ECE",
        access: 'annotator',
        query: SheetQuery,
        statuses: { 404: 'no such slice' },
      },
      async ({ query }) => qualitySheet(db, query),
    )
    .get(
      '/api/quality/attr-audit/{session_id}',
      {
        summary:
          "Attribute audit of a session: per class and attribute key, completeness, value distribution, values conflicting within a track and values deviating from the class's dominant one",
        access: 'annotator',
        params: uuidParams('session_id'),
        statuses: { 404: 'no such session' },
      },
      async ({ params }) => sessionAttrAudit(db, params.session_id),
    );
}
