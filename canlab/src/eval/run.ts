/**
 * Ground-truth evaluation: generate a capture from each database, run the detectors on the frames
 * alone, score against the database.
 */
import path from 'node:path';
import { loadDbc } from '../dbc/parse';
import type { CanFrame } from '../frame';
import { detectAll, type DetectOptions } from '../detect';
import type { Findings } from '../detect/types';
import { generateCapture, type GenerateOptions } from './generate';
import { scoreFindings, signedF1, type EvalScore } from './score';

/**
 * The only door between the evaluator and the detectors: frames in, findings out. Frames are
 * copied field by field so that nothing else travels with them.
 */
export function detectFromFramesOnly(frames: readonly CanFrame[], options: DetectOptions = {}): Findings {
  const clean: CanFrame[] = frames.map((f) => ({
    timestamp: f.timestamp,
    id: f.id,
    extended: f.extended,
    remote: f.remote,
    error: f.error,
    fd: f.fd,
    brs: f.brs,
    esi: f.esi,
    dlc: f.dlc,
    data: Uint8Array.from(f.data),
    channel: f.channel,
  }));
  return detectAll(clean, options);
}

export interface EvalResult {
  name: string;
  score: EvalScore;
  frames: number;
  seconds: number;
}

export async function evaluateDbc(
  file: string,
  options: GenerateOptions & DetectOptions = {},
): Promise<EvalResult> {
  const db = await loadDbc(file);
  const started = Date.now();
  const { frames, truth } = generateCapture(db, options);
  const findings = detectFromFramesOnly(frames, options);
  return {
    name: path.basename(file, '.dbc'),
    score: scoreFindings(findings, truth),
    frames: frames.length,
    seconds: (Date.now() - started) / 1000,
  };
}

/** Sums the counts of several scores (overlap means weighted by their denominators). */
export function combineScores(scores: readonly EvalScore[]): EvalScore {
  const add = (pick: (s: EvalScore) => { hit: number; total: number }) => ({
    hit: scores.reduce((a, s) => a + pick(s).hit, 0),
    total: scores.reduce((a, s) => a + pick(s).total, 0),
  });
  const sum = (pick: (s: EvalScore) => number): number => scores.reduce((a, s) => a + pick(s), 0);
  const varying = sum((s) => s.varyingSignals);
  const detected = sum((s) => s.detected);
  const signedCounts = {
    tp: sum((s) => s.signedCounts.tp),
    fp: sum((s) => s.signedCounts.fp),
    fn: sum((s) => s.signedCounts.fn),
  };
  return {
    messages: sum((s) => s.messages),
    truthSignals: sum((s) => s.truthSignals),
    excludedSignals: sum((s) => s.excludedSignals),
    constantSignals: sum((s) => s.constantSignals),
    varyingSignals: varying,
    detected,
    boundaryExact: {
      recall: add((s) => s.boundaryExact.recall),
      precision: add((s) => s.boundaryExact.precision),
    },
    boundaryExactExercised: add((s) => s.boundaryExactExercised),
    signedCounts,
    overlapRecall: varying ? sum((s) => s.overlapRecall * s.varyingSignals) / varying : 1,
    overlapPrecision: detected ? sum((s) => s.overlapPrecision * s.detected) / detected : 1,
    counters: add((s) => s.counters),
    checksumsPosition: add((s) => s.checksumsPosition),
    checksumsAlgorithm: add((s) => s.checksumsAlgorithm),
    endianness: add((s) => s.endianness),
    endiannessMultiByte: add((s) => s.endiannessMultiByte),
    signedness: add((s) => s.signedness),
    signedF1: signedF1(signedCounts),
    multiplexers: add((s) => s.multiplexers),
    misses: scores.flatMap((s) => s.misses),
  };
}
