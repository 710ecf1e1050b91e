import type { Counts } from './datasheet';

/**
 * What an export counts as it writes its pages, so the datasheet and the commit need no second
 * pass over a million rows. It travels in the job row with the cursor: a resumed export continues
 * the tally of the pages already written, and a page rewritten after a crash was never counted.
 */
export interface ExportTally {
  objects: number;
  frames: number;
  perClass: Counts;
  perL1: Counts;
  perState: Counts;
  perSource: Counts;
  /** Frames per `lighting` value. */
  perLighting: Counts;
  perSplit: Record<string, { frames: number; objects: number }>;
  /** Per session id: frames and objects exported. */
  sessions: Record<string, { frames: number; objects: number }>;
  pii: { frames_audited: number; faces: number; plates: number };
}

export const emptyTally = (): ExportTally => ({
  objects: 0,
  frames: 0,
  perClass: {},
  perL1: {},
  perState: {},
  perSource: {},
  perLighting: {},
  perSplit: {},
  sessions: {},
  pii: { frames_audited: 0, faces: 0, plates: 0 },
});

const bump = (counts: Counts, key: string, by = 1) => {
  counts[key] = (counts[key] ?? 0) + by;
};

export interface TalliedFrame {
  sessionId: string;
  split: string;
  lighting: string;
  audited: boolean;
  faces: number | null;
  plates: number | null;
  objects: ReadonlyArray<{ class_name: string; l1: string; state: string; source: string }>;
}

/** Adds one page's frames to a tally (a new tally; the input is left as it was). */
export function tallyPage(before: ExportTally, frames: readonly TalliedFrame[]): ExportTally {
  const t: ExportTally = structuredClone(before);
  for (const f of frames) {
    t.frames++;
    t.objects += f.objects.length;
    bump(t.perLighting, f.lighting);
    const split = (t.perSplit[f.split] ??= { frames: 0, objects: 0 });
    split.frames++;
    split.objects += f.objects.length;
    const session = (t.sessions[f.sessionId] ??= { frames: 0, objects: 0 });
    session.frames++;
    session.objects += f.objects.length;
    if (f.audited) {
      t.pii.frames_audited++;
      t.pii.faces += f.faces ?? 0;
      t.pii.plates += f.plates ?? 0;
    }
    for (const o of f.objects) {
      bump(t.perClass, o.class_name);
      bump(t.perL1, o.l1);
      bump(t.perState, o.state);
      bump(t.perSource, o.source);
    }
  }
  return t;
}
