/**
 * The detectors, one tool each plus a run-all, and the draft DBC. They read the workspace's
 * findings (computed once per change of frames), so calling several detector tools costs one run.
 */
import { z } from 'zod';
import { describeField } from '../../analysis/bits';
import { writeDbc } from '../../dbc';
import type { Candidate, IdFindings } from '../../detect/types';
import { CanlabInputError } from '../../errors';
import type { WorkspaceApi } from '../../workspace/types';
import { guarded, idArg, parseId, requireFrames, type ToolFamily } from '../common';

type CandidateList = 'counters' | 'checksums' | 'fields' | 'flags' | 'valueTables' | 'multiplexers';

interface DetectorTool {
  name: string;
  title: string;
  list: CandidateList;
  description: string;
}

const DETECTORS: readonly DetectorTool[] = [
  {
    name: 'detect_counters',
    title: 'Detect counters',
    list: 'counters',
    description:
      'Rolling counters of any width, position and step with wrap-around: field (start bit, length, byte order), step, modulus and the share of frame pairs that follow the rule.',
  },
  {
    name: 'detect_checksums',
    title: 'Detect checksums',
    list: 'checksums',
    description:
      'Checksums (XOR, additive, negated sum, nibble sums, CRC-8 SAE J1850, CRC-8 AUTOSAR 0x2F with data id; Honda/Toyota/Tesla variants) with algorithm, parameters, covered bytes and position.',
  },
  {
    name: 'detect_fields',
    title: 'Detect signal boundaries',
    list: 'fields',
    description:
      'Signal boundaries found by a minimum-description-length split of the moving bits, with byte order (little_endian = Intel, big_endian = Motorola, start bit = MSB) and its confidence, signedness and its confidence, raw range.',
  },
  {
    name: 'detect_flags',
    title: 'Detect flags',
    list: 'flags',
    description: 'Single-bit flags: toggle count and share of frames with the bit set.',
  },
  {
    name: 'detect_value_tables',
    title: 'Detect value tables',
    list: 'valueTables',
    description:
      'Fields that take a few discrete values (enumerations, states) with the frame count of each value.',
  },
  {
    name: 'detect_multiplexers',
    title: 'Detect multiplexers',
    list: 'multiplexers',
    description:
      'Multiplexer selectors: the selector field and, per selector value, the bits that move only while it holds that value.',
  },
];

function candidateView(c: Candidate): Record<string, unknown> {
  return { where: describeField(c.field), ...c };
}

function findingsFor(ws: WorkspaceApi, id: string | undefined): IdFindings[] {
  requireFrames(ws);
  const all = ws.findings().ids;
  if (id === undefined) return all;
  const ref = parseId(id);
  const found = all.filter((f) => f.key === ref.key);
  if (found.length === 0)
    throw new CanlabInputError('id', `${ref.key} does not occur in the workspace's frames`);
  return found;
}

const detectorInput = {
  id: idArg.optional().describe('Only this id (default: every id)'),
  minConfidence: z
    .number()
    .min(0)
    .max(1)
    .optional()
    .describe('Drop candidates below this confidence (default 0)'),
};

export const detectTools: ToolFamily = (server, workspace) => {
  for (const d of DETECTORS) {
    server.registerTool(
      d.name,
      {
        title: d.title,
        description: `${d.description} Per id, from the frames alone.`,
        inputSchema: z.strictObject(detectorInput),
        annotations: { readOnlyHint: true },
      },
      ({ id, minConfidence }) =>
        guarded(() => {
          const ids = findingsFor(workspace(), id)
            .map((f) => ({
              id: f.key,
              frames: f.frames,
              length: f.length,
              candidates: (f[d.list] as Candidate[])
                .filter((c) => c.confidence >= (minConfidence ?? 0))
                .map(candidateView),
            }))
            .filter((f) => id !== undefined || f.candidates.length > 0);
          return { detector: d.list, ids };
        }),
    );
  }

  server.registerTool(
    'detect_all',
    {
      title: 'Run every detector',
      description:
        'All detectors per id: constant bits, the byte order that describes the id best, counters, checksums, fields, flags, value tables and multiplexers.',
      inputSchema: z.strictObject({ id: detectorInput.id }),
      annotations: { readOnlyHint: true },
    },
    ({ id }) =>
      guarded(() => ({
        ids: findingsFor(workspace(), id).map((f) => ({
          ...f,
          counters: f.counters.map(candidateView),
          checksums: f.checksums.map(candidateView),
          fields: f.fields.map(candidateView),
          flags: f.flags.map(candidateView),
          valueTables: f.valueTables.map(candidateView),
          multiplexers: f.multiplexers.map(candidateView),
        })),
      })),
  );

  server.registerTool(
    'draft_dbc',
    {
      title: 'Draft a DBC',
      description:
        'A draft DBC from the findings (one message per id; overlapping claims resolved by confidence; placeholder names, factor 1). Returns the DBC text.',
      inputSchema: z.strictObject({}),
      annotations: { readOnlyHint: true },
    },
    () =>
      guarded(() => {
        const ws = workspace();
        requireFrames(ws);
        const db = ws.draftDbc();
        return {
          messages: db.messages.length,
          signals: db.messages.reduce((n, m) => n + m.signals.length, 0),
          dbc: writeDbc(db),
        };
      }),
  );
};
