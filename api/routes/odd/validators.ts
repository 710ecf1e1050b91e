import { z } from 'zod';
import {
  CLOSED_ATTRIBUTES,
  MANEUVERS,
  ODD_ATTRIBUTES,
  ODD_VOCABULARY,
  UNKNOWN,
} from '../../../core/odd/attributes';
import { CLIQUE_SIZES, CLIQUE_VALUE } from '../../../core/odd/clique';
import { PRIORITY_TARGET_FRAMES } from '../../../core/odd/coverage';
import { MAX_UNITS } from '../../../core/odd/bandit';
import { booleanParam, limitParam } from '../../http/session-reads';

/** Bodies and queries of the coverage (ODD) routes (the spec names CliqueRewardIn only; docs/odd-coverage.md). */

/** Lists in a query string stay well inside Node's 16 KiB header limit (beyond it: 431, not a 422). */
const MAX_QUERY_SESSIONS = 200;
const MAX_CLASSES = 50;

/** A comma-separated query list of items matching `item`, split, with its length bounded. */
function commaList(item: string, max: number, itemMax: number, description: string) {
  return z
    .string()
    .max(max * (itemMax + 1))
    .regex(new RegExp(`^${item}(,${item})*$`), `comma-separated, each ${item}`)
    .transform((s) => [...new Set(s.split(','))])
    .refine((items) => items.length <= max, `at most ${max}`)
    .optional()
    .meta({ description });
}

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const CLASS_NAME = '[a-z][a-z0-9_]{0,63}';

const scopeQuery = {
  session_ids: commaList(
    UUID,
    MAX_QUERY_SESSIONS,
    36,
    `comma-separated session ids (at most ${MAX_QUERY_SESSIONS}, each must exist): only their frames`,
  ),
  classes: commaList(
    CLASS_NAME,
    MAX_CLASSES,
    64,
    `comma-separated ontology classes (at most ${MAX_CLASSES}; each selects its descendants): only frames holding such an object, and only those objects counted`,
  ),
};

const scopeBody = {
  session_ids: z.array(z.uuid()).min(1).max(1000).optional().meta({
    description: 'only frames of these sessions (each must exist); omitted: the whole corpus',
  }),
  classes: z
    .array(z.string().regex(new RegExp(`^${CLASS_NAME}$`)))
    .min(1)
    .max(MAX_CLASSES)
    .optional()
    .meta({
      description: 'only frames holding an object of these classes (or their descendants)',
    }),
};

const attribute = z.enum(ODD_ATTRIBUTES);
const attributesParam = commaList(
  `(${ODD_ATTRIBUTES.join('|')})`,
  ODD_ATTRIBUTES.length,
  32,
  `comma-separated attributes to combine (default all: ${ODD_ATTRIBUTES.join(', ')})`,
).transform((a) => (a ?? [...ODD_ATTRIBUTES]) as Array<(typeof ODD_ATTRIBUTES)[number]>);

export const CompositionQuery = z.strictObject(scopeQuery);

const bound = z
  .strictObject({
    min_frames: z.int().min(1).max(100_000_000).optional(),
    min_share: z
      .number()
      .gt(0)
      .lt(1)
      .optional()
      .meta({ description: 'share of the frames in scope, below 1' }),
  })
  .refine(
    (b) => b.min_frames !== undefined || b.min_share !== undefined,
    'give min_frames, min_share or both',
  );

export const OddGapsIn = z
  .strictObject({
    target: z
      .partialRecord(
        attribute,
        z
          .record(z.string().regex(CLIQUE_VALUE, '1–64 characters, no | or ='), bound)
          .refine(
            (values) => Object.keys(values).length >= 1 && Object.keys(values).length <= 100,
            '1 to 100 values',
          ),
      )
      .refine((t) => Object.keys(t).length >= 1, 'name at least one attribute')
      .meta({
        description:
          'per attribute, the values required, each with min_frames and/or min_share (e.g. {"weather": {"rain": {"min_share": 0.1}}})',
      }),
    ...scopeBody,
  })
  .superRefine((body, ctx) => {
    for (const [name, values] of Object.entries(body.target)) {
      const a = name as (typeof ODD_ATTRIBUTES)[number];
      if (!CLOSED_ATTRIBUTES.has(a)) continue;
      for (const value of Object.keys(values ?? {}))
        if (value !== UNKNOWN && !ODD_VOCABULARY[a].includes(value))
          ctx.addIssue({
            code: 'custom',
            path: ['target', name, value],
            message: `not a ${name} value: one of ${ODD_VOCABULARY[a].join(', ')}`,
          });
    }
  });

const sizes = z
  .enum(['2', '3', '2,3'])
  .default('2,3')
  .transform((s) => s.split(',').map(Number))
  .meta({ description: `attributes per clique: ${CLIQUE_SIZES.join(' or ')} or both` });

export const CliquesQuery = z.strictObject({
  ...scopeQuery,
  attributes: attributesParam,
  sizes,
  include_unknown: booleanParam.default(false).meta({ description: 'also cliques with an unknown value' }),
  min_frames: z.coerce.number().int().min(1).max(1_000_000).default(1),
  order: z.enum(['frames_desc', 'frames_asc']).default('frames_desc'),
  limit: limitParam(100, 1000),
});

const CLIQUE = z
  .string()
  .min(3)
  .max(200)
  .meta({ description: 'a clique name: attribute=value parts joined by |' });

export const OddCliqueSelectIn = z.strictObject({
  budget: z.int().min(1).max(1_000_000).meta({ description: 'labels to allocate' }),
  cliques: z.array(CLIQUE).min(1).max(200).optional().meta({
    description:
      'the cliques to allocate across; omitted: the `candidates` highest-priority 2-attribute cliques',
  }),
  candidates: z.int().min(1).max(200).default(20),
  seed: z
    .int()
    .min(0)
    .max(2 ** 31 - 1)
    .default(1)
    .meta({
      description: `seeds the Thompson draws (at most ${MAX_UNITS} units): the same seed and posteriors give the same allocation`,
    }),
  ...scopeBody,
});

const recall = z.number().min(0).max(1).nullable();

export const CliqueRewardIn = z.strictObject({
  clique: CLIQUE,
  allocated: z.int().min(1).max(1_000_000).meta({ description: 'labels allocated to the clique' }),
  recall_after: recall.default(null),
  recall_before: recall.default(null),
});

export const PriorityQuery = z.strictObject({
  ...scopeQuery,
  sizes,
  target_frames: z.coerce.number().int().min(1).max(1_000_000).default(PRIORITY_TARGET_FRAMES),
  limit: limitParam(50, 1000),
});

export const ManeuverIn = z
  .strictObject({
    session_id: z.uuid(),
    maneuver: z.enum(MANEUVERS),
    from_index: z.int().min(0).optional(),
    to_index: z.int().min(0).optional(),
    from_ms: z.number().min(0).optional(),
    to_ms: z.number().min(0).optional(),
  })
  .superRefine((body, ctx) => {
    const byIndex = body.from_index !== undefined || body.to_index !== undefined;
    const byTime = body.from_ms !== undefined || body.to_ms !== undefined;
    const [from, to, names] = byIndex
      ? [body.from_index, body.to_index, ['from_index', 'to_index']]
      : [body.from_ms, body.to_ms, ['from_ms', 'to_ms']];
    if (byIndex === byTime)
      ctx.addIssue({
        code: 'custom',
        path: ['from_index'],
        message:
          'give a frame range by index (from_index, to_index) or by timestamp (from_ms, to_ms), not both',
      });
    else if (from === undefined || to === undefined)
      ctx.addIssue({
        code: 'custom',
        path: [from === undefined ? names[0]! : names[1]!],
        message: 'give both bounds',
      });
    else if (to < from) ctx.addIssue({ code: 'custom', path: [names[1]!], message: `must be ≥ ${names[0]}` });
  });

export const DiscoverQuery = z.strictObject({
  ...scopeQuery,
  attributes: attributesParam,
  min_share: z.coerce.number().gt(0).lt(1).default(0.01).meta({
    description: 'a present pair of values under this share of the frames is under-represented',
  }),
  limit: limitParam(100, 1000),
});
