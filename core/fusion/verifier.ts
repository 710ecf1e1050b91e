import { summarise, type FusedObject, type Member } from './wbf';

/**
 * The vision-language verifier's say on one uncertain object. `confirm` adds its vote for the
 * fused class, `relabel` a vote for another class, `reject` no vote at all: the verifier then
 * counts among the paths that ran but not among those that proposed the object, so agreement and
 * confidence drop.
 */
export const VERIFIER_VERDICTS = ['confirm', 'reject', 'relabel'] as const;
export type VerifierVerdict = (typeof VERIFIER_VERDICTS)[number];

export interface VerifierAnswer {
  verdict: VerifierVerdict;
  /** The class the verifier names (required for relabel; the fused class for confirm). */
  className: string | null;
  confidence: number;
  rationale: string | null;
}

/** What provenance keeps of the verifier's part (the spec's reasoner trace). */
export interface VerifierTrace {
  model: string;
  verdict: VerifierVerdict;
  class_name: string | null;
  confidence: number;
  rationale: string | null;
  /** The fused class and confidence the verifier was shown. */
  asked: { class_name: string; conf: number };
}

export function applyVerifierAnswer(
  obj: FusedObject,
  answer: VerifierAnswer,
  model: string,
): FusedObject & { verifier: VerifierTrace } {
  const members: Member[] = [...obj.members];
  if (answer.verdict !== 'reject') {
    const className = answer.verdict === 'relabel' && answer.className ? answer.className : obj.className;
    members.push({ path: 'verifier', className, score: answer.confidence, box: obj.box });
  }
  const fused = summarise(obj.box, members, [...obj.pathsRan, 'verifier'], obj.mask);
  return {
    ...fused,
    verifier: {
      model,
      verdict: answer.verdict,
      class_name: answer.className,
      confidence: answer.confidence,
      rationale: answer.rationale,
      asked: { class_name: obj.className, conf: obj.conf },
    },
  };
}
