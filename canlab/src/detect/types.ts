/**
 * Findings the detectors produce. Every candidate names the bits it claims (a DBC-style field),
 * a confidence in [0, 1] and human-readable evidence lines with the numbers behind it.
 */
import type { FieldRef } from '../analysis/bits';

export type { FieldRef } from '../analysis/bits';

interface CandidateBase {
  field: FieldRef;
  confidence: number;
  evidence: string[];
}

export interface CounterCandidate extends CandidateBase {
  kind: 'counter';
  /** Increment per frame, modulo `modulus`, on the reported field. */
  step: number;
  modulus: number;
  /** Share of consecutive frame pairs that follow the counter rule. */
  matchRate: number;
  /** When constant-zero bits below the counter reach a nibble boundary: the aligned reading, whose step is `step * 2^k`. */
  aligned?: { field: FieldRef; step: number };
}

export type ChecksumAlgorithm =
  'xor8' | 'sum8' | 'negsum8' | 'crc8_sae_j1850' | 'crc8_autosar_8h2f' | 'nibble_sum' | 'nibble_negsum';

export interface ChecksumCandidate extends CandidateBase {
  kind: 'checksum';
  algorithm: ChecksumAlgorithm;
  /** Common name when the parameters match a known scheme: `toyota`, `honda`, `tesla`, `sum+id`... */
  variant: string;
  /** Constant added (sum) or XORed (xor) or subtracted from (negsum); 0 when none. */
  constant: number;
  /** CRC data id and where it enters the CRC. */
  dataId?: number;
  dataIdPlacement?: 'append' | 'prepend';
  /** Payload bytes covered, in order. */
  coveredBytes: number[];
  matchRate: number;
}

export interface FieldCandidate extends CandidateBase {
  kind: 'field';
  signed: boolean;
  signedConfidence: number;
  /** Confidence that the byte order is right; 0.5 when the field sits inside one byte (either order reads the same). */
  byteOrderConfidence: number;
  /** Distinct raw values seen (capped at 4096). */
  distinctValues: number;
  minRaw: number;
  maxRaw: number;
  /** Multiplexer value the field belongs to, when found inside a multiplexed group. */
  multiplexerValue?: number;
}

export interface FlagCandidate extends CandidateBase {
  kind: 'flag';
  toggles: number;
  /** Share of frames with the bit set. */
  onRatio: number;
  multiplexerValue?: number;
}

export interface ValueTableCandidate extends CandidateBase {
  kind: 'value_table';
  /** Raw value → frames holding it. */
  values: Array<{ value: number; count: number }>;
  multiplexerValue?: number;
}

export interface MultiplexerCandidate extends CandidateBase {
  kind: 'multiplexer';
  /** Selector value → DBC bit indices that move only while the selector holds it (plus shared bits). */
  groups: Array<{ value: number; frames: number; movingBits: number[] }>;
  /** Selector values seen in too few frames to analyse their page; a decoder must still know them. */
  rareValues: Array<{ value: number; frames: number }>;
}

export type Candidate =
  | CounterCandidate
  | ChecksumCandidate
  | FieldCandidate
  | FlagCandidate
  | ValueTableCandidate
  | MultiplexerCandidate;

export interface IdFindings {
  id: number;
  extended: boolean;
  key: string;
  frames: number;
  /** Payload length analysed (most common length of the id). */
  length: number;
  /** Byte order that described the id's fields best. */
  byteOrder: FieldRef['byteOrder'];
  /** DBC bit indices that never changed. */
  constantBits: number[];
  counters: CounterCandidate[];
  checksums: ChecksumCandidate[];
  fields: FieldCandidate[];
  flags: FlagCandidate[];
  valueTables: ValueTableCandidate[];
  multiplexers: MultiplexerCandidate[];
}

export interface Findings {
  ids: IdFindings[];
}
