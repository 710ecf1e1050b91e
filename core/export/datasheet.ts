import type { PrecisionFigure } from '../control';

/**
 * The coverage datasheet of an export (docs/datasets.md), in the sections of "Datasheets for
 * Datasets" (Gebru et al., 2021) that a machine can fill: motivation, composition, collection,
 * labelling, uses and distribution, maintenance. Everything in it is measured from the exported
 * rows; what we cannot know (intended uses beyond training, consent terms) is said to be unknown.
 */

export type Counts = Record<string, number>;

export interface DatasheetInput {
  name: string;
  predicate: unknown;
  formats: string[];
  split: { seed: number; train: number; val: number; test: number };
  totals: { objects: number; frames: number; sessions: number };
  perClass: Counts;
  perL1: Counts;
  perContext: Record<string, Counts>;
  perRarityBand: Counts;
  perState: Counts;
  perSource: Counts;
  perSplit: Record<string, { frames: number; objects: number }>;
  /** Objects a person verified (source `human`) versus objects accepted by the auto-labeller. */
  verification: { human_verified: number; auto_accepted: number; other: number };
  controlPrecision: PrecisionFigure;
  pii: { frames_audited: number; frames: number; faces: number; plates: number };
  gate: { mode: string; outcome: string; frames_without_audit: number; uncovered_objects: number };
  sessions: Array<{ id: string; name: string; frames: number }>;
  modelVersions: string[];
}

export interface Datasheet extends DatasheetInput {
  kind: 'drivelab.datasheet/v1';
  shares: { human_verified: number; auto_accepted: number; pii_audit_coverage: number };
}

const share = (part: number, whole: number): number =>
  whole ? Math.round((part / whole) * 10000) / 10000 : 0;
const pct = (v: number): string => `${(v * 100).toFixed(1)} %`;

export function buildDatasheet(input: DatasheetInput): Datasheet {
  return {
    kind: 'drivelab.datasheet/v1',
    ...input,
    shares: {
      human_verified: share(input.verification.human_verified, input.totals.objects),
      auto_accepted: share(input.verification.auto_accepted, input.totals.objects),
      pii_audit_coverage: share(input.pii.frames_audited, input.pii.frames),
    },
  };
}

function table(title: string, counts: Counts, total: number): string[] {
  const rows = Object.entries(counts).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  if (!rows.length) return [`_No ${title.toLowerCase()}._`, ''];
  return [
    `| ${title} | count | share |`,
    '| --- | ---: | ---: |',
    ...rows.map(([k, n]) => `| ${k} | ${n} | ${pct(share(n, total))} |`),
    '',
  ];
}

export function datasheetMarkdown(d: Datasheet): string {
  const precision =
    d.controlPrecision.status === 'measured'
      ? `${pct(d.controlPrecision.precision ?? 0)} (Laplace-smoothed, ${d.controlPrecision.reviewed} reviewed controls)`
      : `not yet measurable (${d.controlPrecision.reason})`;
  const lines = [
    `# Datasheet: ${d.name}`,
    '',
    // Who exported it and when are in the commit's certificate: the files stay content-addressed.
    `Formats: ${d.formats.join(', ')}.`,
    '',
    '## Motivation',
    '',
    'Training and evaluation data for driving perception, selected from reviewed drives by the slice below.',
    'Who funded the collection and for which tasks beyond training it is fit: not recorded by the platform.',
    '',
    '## Composition',
    '',
    `${d.totals.objects} objects on ${d.totals.frames} frames from ${d.totals.sessions} sessions (drives).`,
    '',
    '```json',
    JSON.stringify(d.predicate, null, 2),
    '```',
    '',
    ...table('Class', d.perClass, d.totals.objects),
    ...table('Class group (l1)', d.perL1, d.totals.objects),
    ...table('Rarity band', d.perRarityBand, d.totals.objects),
    ...Object.entries(d.perContext).flatMap(([key, counts]) =>
      table(`Frame context: ${key}`, counts, d.totals.frames),
    ),
    `Splits by session (seed ${d.split.seed}; train ${d.split.train}, val ${d.split.val}, test ${d.split.test}); frames of one drive never straddle splits:`,
    '',
    '| split | frames | objects |',
    '| --- | ---: | ---: |',
    ...Object.entries(d.perSplit).map(([s, c]) => `| ${s} | ${c.frames} | ${c.objects} |`),
    '',
    '## Collection process',
    '',
    'Frames were extracted from dashcam video, bag files or frame folders at the ingest rate, with near-duplicates dropped.',
    '',
    '| session | name | frames |',
    '| --- | --- | ---: |',
    ...d.sessions.map((s) => `| ${s.id} | ${s.name.replace(/\|/g, '\\|')} | ${s.frames} |`),
    '',
    '## Preprocessing, cleaning and labelling',
    '',
    `- Human-verified objects: ${d.verification.human_verified} (${pct(d.shares.human_verified)}); auto-accepted by the auto-labeller: ${d.verification.auto_accepted} (${pct(d.shares.auto_accepted)}); other: ${d.verification.other}.`,
    `- Measured precision of auto-accepted objects from the 2 % control sample: ${precision}.`,
    `- Model versions that proposed labels: ${d.modelVersions.length ? d.modelVersions.join(', ') : 'none recorded'}.`,
    '',
    ...table('State', d.perState, d.totals.objects),
    ...table('Source', d.perSource, d.totals.objects),
    '## Privacy',
    '',
    `- Images are the redacted copies (faces and licence plates pixelated). PII audit coverage: ${d.pii.frames_audited} of ${d.pii.frames} frames (${pct(d.shares.pii_audit_coverage)}); ${d.pii.faces} faces and ${d.pii.plates} plates redacted.`,
    `- Privacy gate: mode \`${d.gate.mode}\`, outcome \`${d.gate.outcome}\`; frames without a PII audit: ${d.gate.frames_without_audit}; persons and vehicles without a contained redaction: ${d.gate.uncovered_objects}.`,
    '',
    '## Uses and distribution',
    '',
    'Distributed as an immutable, signed dataset commit; the certificate lists the SHA-256 of every file.',
    '',
    '## Maintenance',
    '',
    'New versions of this dataset are new commits under the same name; erasure requests remove sessions from later versions.',
    '',
  ];
  return lines.join('\n');
}
