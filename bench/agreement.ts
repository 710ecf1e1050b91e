import { performance } from 'node:perf_hooks';
import { unsafeUniformIntDistribution, xoroshiro128plus } from 'pure-rand';
import { type Box, iou } from '../core/geometry/boxes';
import { type AgreementAnnotation, computeAgreement } from '../core/quality/agreement';

/**
 * The IAA target: agreement over 10,000 frames × 3 annotators with about 10 objects each per frame
 * (300,000 annotations) in under 5 s. Beside it, the floor measured in the same run: computing only
 * the pairwise IoU matrices of the same frames (no assignment, units or statistics). The frames are
 * generated from a fixed seed: each annotator sees the same ~10 objects, jittered, with a few misses,
 * extras and class flips. Figures only; nothing asserts them. `BENCH_AGREEMENT_FRAMES` scales it.
 */
const FRAMES = Number(process.env.BENCH_AGREEMENT_FRAMES ?? 10_000);
const ANNOTATORS = ['ann_a', 'ann_b', 'ann_c'];
const TARGET_S = 5;
const RUNS = 3;

function generate(): AgreementAnnotation[] {
  const rng = xoroshiro128plus(42);
  const int = (lo: number, hi: number) => unsafeUniformIntDistribution(lo, hi, rng);
  const out: AgreementAnnotation[] = [];
  for (let f = 0; f < FRAMES; f++) {
    const frame_id = `frame-${f}`;
    const objects = Array.from({ length: 10 }, () => {
      const x = int(0, 1800);
      const y = int(0, 1000);
      return { box: [x, y, x + int(20, 200), y + int(20, 120)] as Box, cls: int(0, 4) };
    });
    for (const annotator of ANNOTATORS) {
      for (const { box, cls } of objects) {
        if (int(0, 19) === 0) continue;
        const jitter = () => int(-6, 6);
        const bbox: Box = [box[0] + jitter(), box[1] + jitter(), box[2] + jitter(), box[3] + jitter()];
        out.push({ annotator, frame_id, class: int(0, 9) === 0 ? int(0, 4) : cls, bbox });
      }
      if (int(0, 4) === 0) {
        const x = int(0, 1800);
        const y = int(0, 1000);
        out.push({ annotator, frame_id, class: int(0, 4), bbox: [x, y, x + 40, y + 40] });
      }
    }
  }
  return out;
}

/** The floor: every pairwise IoU matrix of every frame, and nothing else. */
function iouMatricesOnly(annotations: readonly AgreementAnnotation[]): number {
  const byFrame = new Map<string, Box[][]>();
  for (const a of annotations) {
    let lists = byFrame.get(a.frame_id);
    if (!lists) byFrame.set(a.frame_id, (lists = ANNOTATORS.map(() => [])));
    lists[ANNOTATORS.indexOf(a.annotator)]!.push(a.bbox);
  }
  let checksum = 0;
  for (const lists of byFrame.values()) {
    for (let p = 0; p < lists.length; p++) {
      for (let q = p + 1; q < lists.length; q++) {
        for (const a of lists[p]!) for (const b of lists[q]!) checksum += iou(a, b);
      }
    }
  }
  return checksum;
}

function best(fn: () => unknown): number {
  let fastest = Infinity;
  for (let r = 0; r < RUNS; r++) {
    const t0 = performance.now();
    fn();
    fastest = Math.min(fastest, performance.now() - t0);
  }
  return fastest / 1000;
}

export async function run(): Promise<void> {
  const annotations = generate();
  const report = computeAgreement({ annotations });
  const full = best(() => computeAgreement({ annotations }));
  const floor = best(() => iouMatricesOnly(annotations));
  console.log(
    `IAA ${FRAMES} frames × ${ANNOTATORS.length} annotators, ${annotations.length} objects, ${report.counts.units} units ` +
      `(alpha ${report.class_agreement.krippendorff_alpha?.toFixed(3)}, mean IoU ${report.localisation.mean_iou?.toFixed(3)})`,
  );
  console.log(
    `computeAgreement   best of ${RUNS}: ${full.toFixed(2)} s   target < ${TARGET_S} s   ${full < TARGET_S ? 'met' : 'MISSED'}`,
  );
  console.log(
    `IoU matrices only  best of ${RUNS}: ${floor.toFixed(2)} s   (floor)   ratio ${(full / floor).toFixed(1)}x`,
  );
}
