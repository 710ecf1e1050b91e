import {
  applyCritic,
  criticiseFrame,
  type CriticContext,
  type CriticFrame,
  type CriticVerdict,
} from '../../core/critic';
import {
  applyVerifierAnswer,
  fuseDetections,
  type FusedObject,
  type PathRun,
  type VerifierTrace,
} from '../../core/fusion';
import {
  distanceToAutoAccept,
  isUncertain,
  routeObject,
  routingConf,
  type AgentPolicy,
  type ObjectRoute,
} from '../../core/routing';
import { isSegmentable } from '../../core/segmentation';
import type { ClosedSetResult } from '../detect/closed-set';
import type { FrameImage } from '../detect/frame-image';
import type { OpenVocabPath } from '../detect/open-vocab';
import type { Segmenter } from '../detect/segmentation';
import type { VerifierPath } from '../detect/verifier';

/**
 * One frame through the three paths: both detectors, weighted box fusion, the verifier on the
 * uncertain subset only, routing by policy, then the critic. Pure of storage: the caller reads
 * the frame, hands the closed-set detector its input as early as it can (the model's queue must
 * never run dry), and writes what comes out.
 */
export interface EndpointPaths {
  openVocab: OpenVocabPath;
  verifier: VerifierPath;
  /** The VOC segmentation model for the masks of SEGMENTABLE classes (docs/masks.md); absent, no masks are made. */
  segmenter?: { acquire(): Promise<Segmenter> };
}

/** What the segmentation path did for one object, kept in its reasoner trace; `winner` names the mask stored. */
export type SegmentationTrace =
  | {
      status: 'ran';
      model: string;
      coverage: number;
      polygons: number[][];
      winner: 'segmentation' | 'open_vocab';
    }
  | { status: 'refused' | 'failed'; reason: string };

export interface OntologyLookup {
  /** Live class of a name (or a former name kept as an alias); undefined when the ontology has none. */
  resolve(name: string): { id: number; name: string; l1: string } | undefined;
  /** Class names the verifier may relabel to. */
  names: ReadonlySet<string>;
}

export interface LabelledObject {
  /** Position in the frame's output: with the job and frame it makes the object's idem key. */
  n: number;
  fused: FusedObject & { verifier?: VerifierTrace };
  classId: number;
  state: ObjectRoute;
  routeReason: string;
  /** The conf routing compared under the policy's active calibration (null without one); fused.conf stays raw. */
  calibrated: { conf: number; calibration_id: string } | null;
  critic: CriticVerdict;
  demoted: boolean;
  qualityFlags: string[];
  /** Set for SEGMENTABLE classes when a segmenter was given. */
  segmentation?: SegmentationTrace;
}

export interface FrameLabels {
  objects: LabelledObject[];
  runs: PathRun[];
  verifier: {
    status: 'ran' | 'refused' | 'failed' | 'not_needed';
    asked: number;
    reason?: string;
    model?: string;
  };
  /** Detections dropped because the ontology has no class for them, by name. */
  dropped: Record<string, number>;
  /** The closed-set model's own run time on its thread. */
  inferenceMs: number;
  /** Whether the closed-set detector sliced the frame, its tile plan and why (docs/small-objects.md). */
  slicing: ClosedSetResult['slicing'];
  criticFrame: CriticFrame;
}

export interface FrameInput {
  /** The frame; its full-resolution pixels are decoded only if a configured endpoint asks for them. */
  image: FrameImage;
  /** The closed-set detector's answer for the frame, asked for as soon as its input was ready. */
  closedSet: Promise<ClosedSetResult>;
  timestampMs: number;
  egoSpeedMps: number | null;
}

export async function labelFrame(
  paths: EndpointPaths,
  ontology: OntologyLookup,
  frame: FrameInput,
  opts: {
    policy: AgentPolicy;
    fusionIou: number;
    verifierMaxObjects: number;
    critic: Omit<CriticContext, 'previous'> & { previous: CriticFrame | null };
  },
): Promise<FrameLabels> {
  const [closed, openRun] = await Promise.all([frame.closedSet, paths.openVocab.detect(frame.image)]);
  const dropped: Record<string, number> = { ...closed.dropped };
  // A class name the ontology no longer has (retired, no alias) cannot become an object.
  const known = (run: PathRun): PathRun => {
    if (run.status !== 'ran') return run;
    const detections = run.detections.filter((d) => {
      if (ontology.resolve(d.className)) return true;
      dropped[d.className] = (dropped[d.className] ?? 0) + 1;
      return false;
    });
    return {
      ...run,
      detections: detections.map((d) => ({ ...d, className: ontology.resolve(d.className)!.name })),
    };
  };
  const runs = [known(closed.run), known(openRun)];
  let fused: Array<FusedObject & { verifier?: VerifierTrace }> = fuseDetections(runs, {
    iouThreshold: opts.fusionIou,
  });

  // Only the uncertain subset goes to the verifier, the closest calls first.
  const uncertain = fused
    .map((o, i) => ({ o, i }))
    .filter(({ o }) => isUncertain(o, opts.policy))
    .sort(
      (a, b) => distanceToAutoAccept(a.o, opts.policy) - distanceToAutoAccept(b.o, opts.policy) || a.i - b.i,
    )
    .slice(0, opts.verifierMaxObjects);
  const verifierSummary: FrameLabels['verifier'] = { status: 'not_needed', asked: 0 };
  const unverified = new Set<number>();
  if (uncertain.length) {
    const outcome = await paths.verifier.verify(
      frame.image,
      uncertain.map(({ o, i }) => ({ id: `o${i}`, box: o.box, className: o.className, conf: o.conf })),
      ontology.names,
    );
    verifierSummary.status = outcome.status;
    verifierSummary.asked = uncertain.length;
    if (outcome.status === 'ran') {
      verifierSummary.model = outcome.model;
      fused = fused.map((o, i) => {
        const answer = outcome.answers.get(`o${i}`);
        return answer ? applyVerifierAnswer(o, answer, outcome.model) : o;
      });
      for (const id of outcome.unanswered) unverified.add(Number(id.slice(1)));
    } else {
      verifierSummary.reason = outcome.reason;
      for (const { i } of uncertain) unverified.add(i);
    }
  }

  const criticFrame: CriticFrame = {
    timestampMs: frame.timestampMs,
    width: frame.image.width,
    height: frame.image.height,
    egoSpeedMps: frame.egoSpeedMps,
    objects: fused.map((o, i) => ({
      key: String(i),
      className: o.className,
      l1: ontology.resolve(o.className)!.l1,
      box: o.box,
    })),
  };
  const verdicts = criticiseFrame(criticFrame, opts.critic);
  const objects = fused.map((o, i): LabelledObject => {
    const routed = routeObject(o, opts.policy);
    const critic = verdicts.get(String(i))!;
    const { route, demoted } = applyCritic(routed.route, critic);
    const qualityFlags = [
      ...critic.vetoes.map((v) => `critic:${v.check}`),
      ...(demoted ? ['demoted_by_critic'] : []),
      ...(unverified.has(i) ? ['unverified'] : []),
      ...(o.entropy > 0 ? ['class_disagreement'] : []),
    ];
    return {
      n: i,
      fused: o,
      classId: ontology.resolve(o.className)!.id,
      state: route,
      routeReason: routed.reason,
      calibrated: opts.policy.calibration
        ? { conf: routingConf(o, opts.policy), calibration_id: opts.policy.calibration.calibration_id }
        : null,
      critic,
      demoted,
      qualityFlags,
    };
  });
  if (paths.segmenter) await addMasks(paths.segmenter, frame.image, objects);
  return {
    objects,
    runs,
    verifier: verifierSummary,
    dropped,
    inferenceMs: closed.inferenceMs,
    slicing: closed.slicing,
    criticFrame,
  };
}

/**
 * Masks for the objects of SEGMENTABLE classes: the open-vocabulary path's mask, where it gave
 * one, wins; the segmentation is kept beside it in the trace, so both are recorded. A model that
 * is absent or breaks leaves the objects without a mask and says why; it never fails the frame.
 */
async function addMasks(
  source: NonNullable<EndpointPaths['segmenter']>,
  image: FrameImage,
  objects: LabelledObject[],
): Promise<void> {
  const wanted = objects.filter((o) => isSegmentable(o.fused.className));
  if (!wanted.length) return;
  let segmenter: Segmenter;
  try {
    segmenter = await source.acquire();
  } catch (err) {
    for (const o of wanted) o.segmentation = { status: 'refused', reason: (err as Error).message };
    return;
  }
  for (const o of wanted) {
    try {
      const m = await segmenter.segment(image, o.fused.box, o.fused.className);
      const winner = o.fused.mask ? 'open_vocab' : 'segmentation';
      o.segmentation = {
        status: 'ran',
        model: segmenter.model,
        coverage: m.coverage,
        polygons: m.polygons,
        winner,
      };
      if (winner === 'segmentation' && m.polygons.length) {
        o.fused = { ...o.fused, mask: m.polygons };
        o.qualityFlags.push(...m.qualityFlags);
      }
    } catch (err) {
      o.segmentation = { status: 'failed', reason: (err as Error).message };
    }
  }
}
