import { slotEfficiency, type SlotSpan } from '../../core/hardening/efficiency';
import type { Db } from '../db';

/**
 * The spans that held the GPU slot, from the job records (docs/hardening.md): auto-label and
 * training jobs that ran locally, and inference runs made on the slot, each from its start to its
 * end. A span overlapping the period counts for the part inside it.
 */
async function slotSpans(db: Db, from: Date, to: Date): Promise<SlotSpan[]> {
  const window = {
    startedAt: { not: null, lt: to },
    OR: [{ finishedAt: null }, { finishedAt: { gt: from } }],
  };
  const [autolabel, training, inference] = await Promise.all([
    db.autolabelJob.findMany({
      where: { ...window, computeTarget: 'local' },
      select: { id: true, startedAt: true, finishedAt: true },
    }),
    db.trainingJob.findMany({
      where: { ...window, computeTarget: 'local' },
      select: { id: true, startedAt: true, finishedAt: true },
    }),
    db.inferenceRun.findMany({
      where: { ...window, origin: 'gpu' },
      select: { id: true, startedAt: true, finishedAt: true },
    }),
  ]);
  const spans = (
    kind: string,
    rows: Array<{ id: string; startedAt: Date | null; finishedAt: Date | null }>,
  ) => rows.map((r) => ({ kind, id: r.id, start: r.startedAt!, end: r.finishedAt }));
  return [...spans('autolabel', autolabel), ...spans('training', training), ...spans('inference', inference)];
}

export async function gpuSlotEfficiency(
  db: Db,
  input: { from: Date; to: Date; minGapSeconds: number; topGaps: number },
) {
  const now = new Date();
  const to = input.to.getTime() > now.getTime() ? now : input.to;
  return slotEfficiency(await slotSpans(db, input.from, to), { from: input.from, to, now }, input);
}
