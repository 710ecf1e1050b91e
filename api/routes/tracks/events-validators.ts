import { z } from 'zod';
import { INTENTS } from '../../../core/tracking/intent';
import { TRACK_EVENT_KINDS } from '../../../core/tracking/events';
import { boundedAttrs } from '../../http/bounded-attrs';
import { limitParam } from '../../http/session-reads';

/** Bodies and queries of track events and intent (docs/track-events.md); the spec shows none, so they are ours. */

const kind = z
  .enum(TRACK_EVENT_KINDS)
  .meta({ description: 'what the object does (GET /api/intent/vocab lists the kinds)' });
const frameId = (which: string) =>
  z.uuid().meta({ description: `frame of the track's session where the event ${which}` });
const attrs = boundedAttrs('a note on the event');

export const TrackEventIn = z.strictObject({
  kind,
  start_frame_id: frameId('starts'),
  end_frame_id: frameId('ends (the start frame or later)'),
  attrs: attrs.default({}),
});

export const TrackEventPatch = z
  .strictObject({
    kind: kind.optional(),
    start_frame_id: frameId('starts').optional(),
    end_frame_id: frameId('ends').optional(),
    attrs: attrs.optional().meta({ description: 'replaces the attrs whole' }),
  })
  .refine((p) => Object.keys(p).length > 0, { message: 'give at least one field to change' });

export const TrackEventsQuery = z.strictObject({
  kind: kind.optional(),
  limit: limitParam(200, 1000),
});

export const IntentSetIn = z.strictObject({
  intent: z.enum(INTENTS).meta({ description: 'a value of GET /api/intent/vocab' }),
  note: z.string().max(500).optional(),
});

export const IntentProposeIn = z.strictObject({
  apply: z
    .boolean()
    .default(false)
    .meta({ description: "store the proposal as the track's intent (never over one a person set)" }),
});

export const IntentSessionIn = z.strictObject({ session_id: z.uuid() });
