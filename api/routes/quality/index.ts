import { createMaskStore } from '../../../activities/annotations/masks';
import { goldSetOut, listGoldSets, measureGold, sealGold } from '../../../activities/quality/gold';
import { RefusedError } from '../../../core/errors';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../http/actor';
import { RouteGroup, uuidParams } from '../../http/route-group';
import { GoldMeasureIn, GoldSealIn, GoldSetsQuery } from './validators';

/** Tracks do not exist yet (issue 20); the track-based quality routes refuse by name until they do. */
const tracksMissing = () => {
  throw new RefusedError(
    'track-based quality needs tracks, and no tracker writes them yet: track gap fill and track relabel backfill are refused until tracks exist',
    { reason: 'tracks_unavailable' },
  );
};

/** The `quality` group: gold sets, agreement, calibration, sheets and audits (docs/quality.md). */
export function createQualityRoutes(deps: AppDeps): RouteGroup {
  const { db, storage } = deps;
  const masks = createMaskStore(storage);
  const trackRoute = (summary: string) => ({
    summary: `${summary} — refused (422) until tracks exist`,
    access: 'reviewer' as const,
    statuses: { 422: 'tracks do not exist yet' },
  });
  return new RouteGroup('quality')
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
    .post('/api/quality/track-gap-fill', trackRoute('Fill gaps in tracks by interpolation'), tracksMissing)
    .get('/api/quality/track-gap-fill/plan', trackRoute('Plan of the track gap fill'), tracksMissing)
    .post(
      '/api/quality/track-relabel-backfill',
      trackRoute('Relabel a track from its majority class'),
      tracksMissing,
    )
    .get(
      '/api/quality/track-relabel-backfill/plan',
      trackRoute('Plan of the track relabel backfill'),
      tracksMissing,
    );
}
