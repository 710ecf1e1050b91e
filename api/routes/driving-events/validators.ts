import { z } from 'zod';
import {
  DRIVING_EVENT_KINDS,
  DRIVING_EVENT_SOURCES,
  DRIVING_EVENT_STATES,
} from '../../../core/driving-events';
import { limitParam } from '../../http/session-reads';

/** Bodies and queries of the driving-events group (docs/driving-events.md); the spec shows none, so they are ours. */

const kind = z.enum(DRIVING_EVENT_KINDS).meta({ description: 'a kind of GET /api/events/taxonomy' });
const state = z.enum(DRIVING_EVENT_STATES);
const source = z.enum(DRIVING_EVENT_SOURCES);
const ms = z.number().min(0).max(1e10);

export const DrivingEventIn = z
  .strictObject({
    kind,
    t_start_ms: ms.optional().meta({ description: "start on the frames' clock, ms (with t_end_ms)" }),
    t_end_ms: ms.optional(),
    start_frame_id: z.uuid().optional().meta({ description: 'or: a frame of the session where it starts' }),
    end_frame_id: z.uuid().optional().meta({ description: '…and where it ends (that frame or later)' }),
    track_ids: z
      .array(z.uuid())
      .max(50)
      .default([])
      .meta({ description: 'tracks of the session taking part' }),
    note: z.string().max(1000).optional().meta({ description: "kept in the event's evidence" }),
  })
  .superRefine((b, ctx) => {
    const times = b.t_start_ms !== undefined || b.t_end_ms !== undefined;
    const frames = b.start_frame_id !== undefined || b.end_frame_id !== undefined;
    if (times === frames)
      ctx.addIssue({
        code: 'custom',
        message: 'give the span either as t_start_ms and t_end_ms or as start_frame_id and end_frame_id',
      });
    else if (times && (b.t_start_ms === undefined || b.t_end_ms === undefined))
      ctx.addIssue({
        code: 'custom',
        path: [b.t_start_ms === undefined ? 't_start_ms' : 't_end_ms'],
        message: 'required with the other',
      });
    else if (frames && (b.start_frame_id === undefined || b.end_frame_id === undefined))
      ctx.addIssue({
        code: 'custom',
        path: [b.start_frame_id === undefined ? 'start_frame_id' : 'end_frame_id'],
        message: 'required with the other',
      });
    else if (times && b.t_end_ms! < b.t_start_ms!)
      ctx.addIssue({ code: 'custom', path: ['t_end_ms'], message: 'before t_start_ms' });
  });

export const ReviewIn = z.strictObject({
  note: z.string().max(1000).optional().meta({ description: "the reviewer's note" }),
});

export const DrivingEventsQuery = z.strictObject({
  kind: kind.optional(),
  state: state.optional(),
  source: source.optional(),
  limit: limitParam(500, 2000),
});

const msParam = z.coerce.number().min(0).max(1e10).optional();
/** 0001-01-01T00:00:00Z: PostgreSQL has no year 0, and would refuse the cast. */
const FIRST_INSTANT_MS = -62_135_596_800_000;
const instant = z.iso
  .datetime({ offset: true })
  .refine((v) => Date.parse(v) >= FIRST_INSTANT_MS, { message: 'before the year 1' })
  .transform((v) => new Date(v).toISOString())
  .optional();

export const DrivingEventSearchQuery = z
  .strictObject({
    kind: kind.optional(),
    session_id: z.uuid().optional(),
    state: state.optional(),
    source: source.optional(),
    class: z.string().min(1).max(64).optional().meta({ description: 'a participating class name' }),
    t_from_ms: msParam.meta({ description: 'events whose span reaches this time or later' }),
    t_to_ms: msParam.meta({ description: 'events whose span starts at this time or earlier' }),
    created_from: instant.meta({ description: 'created at or after' }),
    created_to: instant.meta({ description: 'created before' }),
    limit: limitParam(50, 500),
    cursor: z.string().max(512).optional().meta({ description: 'next_cursor of the previous page' }),
  })
  .refine((q) => q.t_from_ms === undefined || q.t_to_ms === undefined || q.t_from_ms <= q.t_to_ms, {
    path: ['t_to_ms'],
    message: 'before t_from_ms',
  });
