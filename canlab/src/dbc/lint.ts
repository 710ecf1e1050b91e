/**
 * `canlab lint`'s checks: what the parser found (ids without the extended flag, ids no frame can
 * carry, long names, bare `m` indicators, statements about undefined objects, Vector's independent
 * signals) and what the parsed model shows: messages sharing an id or a name, signals sharing a
 * name, signals past the message's length, lengths no CAN frame has, signals that share bits while
 * present in the same frame, and multiplexed signals whose switch is missing or ambiguous.
 */
import { messageKey, muxConditions, signalEndByte, type MuxCondition } from './codec';
import type { DbcMessage, DbcSignal } from './model';
import type { DbcFinding, DbcFindingLevel, ParsedDbc } from './parse';

const FD_LENGTHS = [0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 20, 24, 32, 48, 64];
const LEVEL_ORDER: Record<DbcFindingLevel, number> = { error: 0, warning: 1, note: 2 };

const hex = (id: number): string => `0x${id.toString(16).toUpperCase()}`;

/** The payload bits a signal covers, as a mask over bit `8 × byte + bit` (bit 0 the least significant). */
function signalBits(s: DbcSignal): bigint {
  let mask = 0n;
  if (s.byteOrder === 'little_endian') {
    for (let b = s.startBit; b < s.startBit + s.length; b++) mask |= 1n << BigInt(b);
    return mask;
  }
  // Motorola: walk from the most significant bit in the linear big-endian numbering.
  const msbLinear = (s.startBit >> 3) * 8 + (7 - (s.startBit & 7));
  for (let l = msbLinear; l < msbLinear + s.length; l++) mask |= 1n << BigInt((l >> 3) * 8 + 7 - (l & 7));
  return mask;
}

function bitCount(mask: bigint): number {
  let n = 0;
  for (let m = mask; m !== 0n; m &= m - 1n) n++;
  return n;
}

/**
 * What a signal's presence requires of each switch up its chain (switch index → allowed ranges);
 * undefined when it is never present (a switch value list that is empty).
 */
function requirements(
  conditions: Array<MuxCondition | undefined>,
  index: number,
): Map<number, Array<[number, number]>> | undefined {
  const required = new Map<number, Array<[number, number]>>();
  for (let cond = conditions[index]; cond !== undefined; cond = conditions[cond.switchIndex]) {
    if (cond.ranges.length === 0) return undefined;
    if (required.has(cond.switchIndex)) break;
    required.set(cond.switchIndex, cond.ranges);
  }
  return required;
}

/** False when two signals are never in the same frame: some switch they both depend on never satisfies both. */
function maybeTogether(
  a: Map<number, Array<[number, number]>> | undefined,
  b: Map<number, Array<[number, number]>> | undefined,
): boolean {
  if (a === undefined || b === undefined) return false;
  for (const [switchIndex, ranges] of a) {
    const other = b.get(switchIndex);
    if (other && !ranges.some(([lo, hi]) => other.some(([olo, ohi]) => lo <= ohi && olo <= hi))) return false;
  }
  return true;
}

class Linter {
  readonly findings: DbcFinding[];

  constructor(private readonly parsed: ParsedDbc) {
    this.findings = [...parsed.findings];
  }

  private line(object: DbcMessage | DbcSignal): number {
    return this.parsed.lines.get(object) ?? 0;
  }

  private add(
    object: DbcMessage | DbcSignal,
    level: DbcFindingLevel,
    code: string,
    message: string,
    decoding = false,
  ): void {
    this.findings.push({ line: this.line(object), level, code, message, decoding });
  }

  run(): DbcFinding[] {
    const { db } = this.parsed;
    const byId = new Map<number, DbcMessage>();
    const byName = new Map<string, DbcMessage>();
    for (const m of db.messages) {
      const key = messageKey(m.id, m.extended);
      const sameId = byId.get(key);
      if (sameId !== undefined) {
        this.add(
          m,
          'warning',
          'duplicate-message-id',
          `BO_ ${m.name}: id ${hex(m.id)} is also ${sameId.name}'s (line ${this.line(sameId)}); frames with it decode as ${sameId.name}, never as ${m.name}`,
          true,
        );
      } else byId.set(key, m);
      const sameName = byName.get(m.name);
      if (sameName !== undefined)
        this.add(
          m,
          'warning',
          'duplicate-message-name',
          `BO_ ${m.name}: the name is also used at line ${this.line(sameName)}`,
        );
      else byName.set(m.name, m);
      this.lintMessage(m);
    }
    return this.findings.sort((a, b) => a.line - b.line || LEVEL_ORDER[a.level] - LEVEL_ORDER[b.level]);
  }

  private lintMessage(m: DbcMessage): void {
    if (m.length > 64) {
      this.add(
        m,
        'error',
        'length-beyond-can-fd',
        `BO_ ${m.name}: ${m.length} bytes, more than any CAN frame carries (64)`,
      );
    } else if (!FD_LENGTHS.includes(m.length)) {
      const next = FD_LENGTHS.find((n) => n > m.length)!;
      this.add(
        m,
        'warning',
        'not-a-frame-length',
        `BO_ ${m.name}: no CAN FD frame has ${m.length} bytes; its frames carry ${next}`,
      );
    }
    const names = new Map<string, DbcSignal>();
    for (const s of m.signals) {
      const first = names.get(s.name);
      if (first !== undefined) {
        this.add(
          s,
          'warning',
          'duplicate-signal-name',
          `SG_ ${s.name} of ${m.name}: the name is also used at line ${this.line(first)}; CM_, BA_ and VAL_ statements reach only that one`,
        );
      } else names.set(s.name, s);
      const end = signalEndByte(s);
      if (end > m.length) {
        this.add(
          s,
          'error',
          'signal-outside-message',
          `SG_ ${s.name} of ${m.name}: needs ${end} bytes but the message has ${m.length}; not decoded from frames of that length`,
          true,
        );
      }
    }
    const conditions = muxConditions(m);
    this.lintMultiplexing(m, conditions);
    this.lintOverlaps(m, conditions);
  }

  private lintMultiplexing(m: DbcMessage, conditions: Array<MuxCondition | undefined>): void {
    const switches = m.signals.filter((s) => s.isMultiplexer);
    const plainSwitches = switches.filter((s) => s.multiplexerValue === undefined);
    m.signals.forEach((s, i) => {
      const mux = s.extendedMultiplexing;
      if (mux !== undefined) {
        if (!m.signals.some((x, j) => j !== i && x.name === mux.multiplexer)) {
          this.add(
            s,
            'warning',
            'unknown-switch',
            `SG_MUL_VAL_ for ${s.name} of ${m.name} names the switch ${mux.multiplexer}, which the message lacks`,
            true,
          );
        }
        return;
      }
      if (s.multiplexerValue === undefined) return;
      if (!switches.some((x) => x !== s)) {
        this.add(
          s,
          'warning',
          'multiplexed-without-switch',
          `SG_ ${s.name} of ${m.name}: m${s.multiplexerValue} but the message has no other multiplexer switch (M); decoded in every frame`,
          true,
        );
      } else if (plainSwitches.length > 1) {
        const chosen = conditions[i] && m.signals[conditions[i].switchIndex]!.name;
        this.add(
          s,
          'warning',
          'ambiguous-switch',
          `SG_ ${s.name} of ${m.name}: m${s.multiplexerValue} with switches ${plainSwitches.map((x) => x.name).join(', ')} and no SG_MUL_VAL_; canlab reads ${chosen} (cantools decodes it in every frame)`,
          true,
        );
      }
    });
  }

  private lintOverlaps(m: DbcMessage, conditions: Array<MuxCondition | undefined>): void {
    const bits = m.signals.map(signalBits);
    const required = m.signals.map((_, i) => requirements(conditions, i));
    for (let i = 0; i < m.signals.length; i++) {
      for (let j = i + 1; j < m.signals.length; j++) {
        const shared = bits[i]! & bits[j]!;
        if (shared === 0n || !maybeTogether(required[i], required[j])) continue;
        const a = m.signals[i]!;
        const b = m.signals[j]!;
        const n = bitCount(shared);
        this.add(
          b,
          'warning',
          'overlapping-signals',
          `SG_ ${b.name} of ${m.name} shares ${n} bit${n === 1 ? '' : 's'} with ${a.name} (line ${this.line(a)}) in the same frames: at most one of them is right`,
        );
      }
    }
  }
}

/** Every finding about a parsed DBC, by line (then errors first). */
export function lintDbc(parsed: ParsedDbc): DbcFinding[] {
  return new Linter(parsed).run();
}
