import { iou, type Box } from '../geometry';
import type { DetectorPath, FusionPath, PathDetection, PathRun } from './paths';

/**
 * Weighted box fusion across paths (Solovyev et al.): detections of every path that ran, highest
 * score first, join the cluster whose fused box they overlap most (IoU ≥ `iouThreshold`); a
 * cluster's box is the score-weighted mean of its members' boxes. A path proposes an object when
 * one of its detections is in the cluster.
 *
 * - conf: the sum over paths of each path's best score in the cluster, divided by the number of
 *   paths that ran, so an object only one of two detectors saw keeps half its weight;
 * - agreement: the share of the paths that ran that proposed it;
 * - class: the class with the most score mass; entropy (bits) of that class distribution says how
 *   much the paths disagree on what it is (0 when they agree).
 */

export interface Member {
  path: FusionPath;
  className: string;
  score: number;
  box: Box;
  label?: string;
}

export interface FusedObject {
  box: Box;
  className: string;
  conf: number;
  agreement: number;
  entropy: number;
  /** Score mass per class, normalised to sum 1. */
  classDistribution: Record<string, number>;
  /** Paths that proposed it, in FUSION_PATHS order. */
  paths: FusionPath[];
  /** Paths that ran for it (the detectors that ran, and the verifier when it was asked). */
  pathsRan: FusionPath[];
  /** Each proposing path's raw best score and what it called the object. */
  rawConfidences: Partial<Record<FusionPath, { score: number; class_name: string; label?: string }>>;
  members: Member[];
  /** The open-vocabulary path's mask polygons, when it proposed the object. */
  mask: number[][] | null;
}

export interface FusionOptions {
  iouThreshold: number;
  /** The runs are views of one frame by one detector (sliced inference): its same-class boxes merge too. */
  acrossViews?: boolean;
}

const ORDER: readonly FusionPath[] = ['closed_set', 'open_vocab', 'verifier'];

interface Cluster {
  box: Box;
  members: Member[];
  mask: number[][] | null;
}

function weightedBox(members: readonly Member[]): Box {
  const total = members.reduce((s, m) => s + m.score, 0) || 1;
  const avg = (i: 0 | 1 | 2 | 3) => members.reduce((s, m) => s + m.box[i] * m.score, 0) / total;
  return [avg(0), avg(1), avg(2), avg(3)];
}

export function entropyBits(distribution: Record<string, number>): number {
  let h = 0;
  for (const p of Object.values(distribution)) if (p > 0) h -= p * Math.log2(p);
  return h;
}

/** Builds the fused view of a cluster's members given the paths that ran for it. */
export function summarise(
  box: Box,
  members: readonly Member[],
  pathsRan: readonly FusionPath[],
  mask: number[][] | null,
): FusedObject {
  const mass: Record<string, number> = {};
  const best = new Map<FusionPath, Member>();
  for (const m of members) {
    mass[m.className] = (mass[m.className] ?? 0) + m.score;
    const b = best.get(m.path);
    if (!b || m.score > b.score) best.set(m.path, m);
  }
  const total = Object.values(mass).reduce((s, v) => s + v, 0);
  const classDistribution = Object.fromEntries(
    Object.entries(mass).map(([c, v]) => [c, total > 0 ? v / total : 0]),
  );
  // Ties go to the alphabetically first class so the same inputs always give the same object.
  const className = Object.keys(mass).sort((a, b) => mass[b]! - mass[a]! || a.localeCompare(b))[0]!;
  const paths = ORDER.filter((p) => best.has(p));
  const ran = ORDER.filter((p) => pathsRan.includes(p));
  const rawConfidences: FusedObject['rawConfidences'] = {};
  for (const [p, m] of best)
    rawConfidences[p] = { score: m.score, class_name: m.className, ...(m.label ? { label: m.label } : {}) };
  const conf = ran.length ? [...best.values()].reduce((s, m) => s + m.score, 0) / ran.length : 0;
  return {
    box,
    className,
    conf: Math.min(1, conf),
    agreement: ran.length ? paths.filter((p) => ran.includes(p)).length / ran.length : 0,
    entropy: entropyBits(classDistribution),
    classDistribution,
    paths,
    pathsRan: ran,
    rawConfidences,
    members: [...members],
    mask,
  };
}

export function fuseDetections(runs: readonly PathRun[], opts: FusionOptions): FusedObject[] {
  const ran = runs.filter((r): r is Extract<PathRun, { status: 'ran' }> => r.status === 'ran');
  const all: Array<PathDetection & { path: DetectorPath }> = ran.flatMap((r) =>
    r.detections.map((d) => ({ ...d, path: r.path })),
  );
  all.sort((a, b) => b.score - a.score || ORDER.indexOf(a.path) - ORDER.indexOf(b.path));
  const clusters: Cluster[] = [];
  for (const d of all) {
    let target: Cluster | undefined;
    let bestIou = opts.iouThreshold;
    for (const c of clusters) {
      // A path's own NMS already merged its same-class duplicates; a second one is another object.
      if (!opts.acrossViews && c.members.some((m) => m.path === d.path && m.className === d.className))
        continue;
      const o = iou(c.box, d.box);
      if (o >= bestIou) {
        bestIou = o;
        target = c;
      }
    }
    const member: Member = {
      path: d.path,
      className: d.className,
      score: d.score,
      box: d.box,
      ...(d.label ? { label: d.label } : {}),
    };
    if (target) {
      target.members.push(member);
      target.box = weightedBox(target.members);
      target.mask ??= d.mask ?? null;
    } else {
      clusters.push({ box: d.box, members: [member], mask: d.mask ?? null });
    }
  }
  const pathsRan = ran.map((r) => r.path);
  return clusters
    .map((c) => summarise(c.box, c.members, pathsRan, c.mask))
    .sort((a, b) => b.conf - a.conf || a.box[0] - b.box[0] || a.box[1] - b.box[1]);
}
