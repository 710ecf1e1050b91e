import { z } from 'zod';
import { EVENT_ATTRS_LIMITS, eventAttrsProblem } from '../../core/tracking/events';

/**
 * A free-form attrs object held to the event limits (keys, bytes, depth), the one shape track
 * events, timeline events and lanes take their notes in; `what` opens its description.
 */
export const boundedAttrs = (what: string) =>
  z
    .record(z.string(), z.unknown())
    .superRefine((value, ctx) => {
      const problem = eventAttrsProblem(value);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    })
    .meta({
      description: `${what}: at most ${EVENT_ATTRS_LIMITS.maxKeys} keys, ${EVENT_ATTRS_LIMITS.maxBytes} bytes, ${EVENT_ATTRS_LIMITS.maxDepth} levels`,
    });
