import { z } from 'zod';
import { explainObject } from '../../../activities/annotations/explain';
import { frameFilmstrip } from '../../../activities/annotations/filmstrip';
import type { AppDeps } from '../../deps';
import { RouteGroup, uuidParams } from '../../http/route-group';

/** Frames on each side of the filmstrip; 50 keeps one answer a screenful of thumbnails, not a session. */
const MAX_SIDE = 50;
const side = z.coerce.number().int().min(0).max(MAX_SIDE).default(10);
export const FilmstripQuery = z.strictObject({ before: side, after: side });

/**
 * Reads for the frame editor in the `objects` group (docs/annotations.md, Explain and filmstrip):
 * why an object is where it is in the review queue, and the frames around a frame.
 */
export function createObjectExplainRoutes(deps: AppDeps): RouteGroup {
  const { db, config } = deps;
  return new RouteGroup('objects')
    .get(
      '/api/objects/{object_id}/explain',
      {
        summary:
          'Why an object sits where it does in the review queue: score = uncertainty × class rarity and its position, its newest provenance, and the auto-accept threshold in force for its class',
        access: 'annotator',
        params: uuidParams('object_id'),
        statuses: { 404: 'no such object' },
      },
      async ({ params }) => explainObject(db, config, params.object_id),
    )
    .get(
      '/api/frames/{frame_id}/filmstrip',
      {
        summary: `The frames around a frame in its session, in index order, with object counts by state; before/after up to ${MAX_SIDE} each`,
        access: 'annotator',
        params: uuidParams('frame_id'),
        query: FilmstripQuery,
        statuses: { 404: 'no such frame' },
      },
      async ({ params, query }) => frameFilmstrip(db, params.frame_id, query.before, query.after),
    );
}
