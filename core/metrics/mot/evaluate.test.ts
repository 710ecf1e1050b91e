import fs from 'node:fs';
import path from 'node:path';
import { InputError } from '../../errors';
import { evaluateMot, type MotBox } from '.';
import reference from './fixtures/reference.json';

/**
 * Our tracking metrics against the numbers py-motmetrics (CLEAR MOT, identity) and TrackEval
 * (HOTA) give on the same fixtures: MOT15's TUD sequences with the tracker output py-motmetrics
 * ships, our ByteTrack on detections derived from TUD-Campus, and hand-built edge cases
 * (tools/reference/mot_reference.py wrote reference.json; this test never runs Python).
 */
const FIXTURES = path.join(__dirname, 'fixtures');
const boxesOf = (file: string): MotBox[] =>
  (JSON.parse(fs.readFileSync(path.join(FIXTURES, file), 'utf8')) as { boxes: MotBox[] }).boxes;
const handBuilt = (
  JSON.parse(fs.readFileSync(path.join(FIXTURES, 'hand-built.json'), 'utf8')) as {
    cases: Array<{ name: string; gt: MotBox[]; hyp: MotBox[] }>;
  }
).cases;

type Case = (typeof reference.cases)[number];
const inputs = (c: Case): { gt: MotBox[]; hyp: MotBox[] } => {
  if ('handBuilt' in c) return handBuilt.find((h) => h.name === c.handBuilt)!;
  return { gt: boxesOf(c.gtFile), hyp: boxesOf(c.hypFile) };
};

/** Equal to the reference's float64 result, up to summation order. */
const close = (ours: number | null, theirs: number | null | undefined) => {
  if (theirs === null || theirs === undefined) expect(ours).toBeNull();
  else expect(ours).toBeCloseTo(theirs, 10);
};

describe.each(reference.cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
  const { gt, hyp } = inputs(c);
  const ours = evaluateMot(gt, hyp);
  const mm = c.motmetrics;
  const te = c.trackeval;

  it("equals py-motmetrics' CLEAR MOT counts and scores", () => {
    expect(ours.clear).toMatchObject({
      matches: mm.num_matches,
      switches: mm.num_switches,
      false_positives: mm.num_false_positives,
      misses: mm.num_misses,
      gt_boxes: mm.num_objects,
      hyp_boxes: mm.num_predictions,
    });
    close(ours.clear.mota, mm.mota);
    // motmetrics reports MOTP as the mean distance 1 - IoU; ours is the mean IoU.
    close(ours.clear.motp, mm.motp === null ? null : 1 - mm.motp);
  });

  it("equals py-motmetrics' identity scores", () => {
    close(ours.identity.idf1, mm.idf1);
    close(ours.identity.idp, mm.idp);
    close(ours.identity.idr, mm.idr);
  });

  it("equals TrackEval's HOTA and its parts, per α and on average", () => {
    expect(ours.hota.per_alpha.map((a) => a.alpha)).toEqual(
      te.alphas.map((a) => expect.closeTo(a, 12) as unknown as number),
    );
    const fields = [
      ['hota', 'HOTA'],
      ['det_a', 'DetA'],
      ['ass_a', 'AssA'],
      ['loc_a', 'LocA'],
      ['det_re', 'DetRe'],
      ['det_pr', 'DetPr'],
      ['ass_re', 'AssRe'],
      ['ass_pr', 'AssPr'],
    ] as const;
    for (const [key, name] of fields) {
      close(ours.hota[key], te[name]);
      ours.hota.per_alpha.forEach((a, i) => close(a[key], te.perAlpha[name][i]!));
    }
    ours.hota.per_alpha.forEach((a, i) => {
      expect(a.tp).toBe(te.perAlpha.HOTA_TP[i]);
      expect(a.fn).toBe(te.perAlpha.HOTA_FN[i]);
      expect(a.fp).toBe(te.perAlpha.HOTA_FP[i]);
    });
  });
});

describe('bad input', () => {
  it('refuses a track with two boxes on one frame, and a box that is not four finite numbers', () => {
    const box = { frame: 1, id: 'a', box: [0, 0, 10, 10] as [number, number, number, number] };
    expect(() => evaluateMot([box, box], [])).toThrow(InputError);
    expect(() => evaluateMot([], [{ ...box, box: [0, 0, Number.NaN, 1] }])).toThrow(/hyp\[0\] is not a box/);
    expect(() => evaluateMot([{ ...box, frame: 1.5 }], [])).toThrow(/gt\[0\] is not a box/);
  });
});
