/** Human-readable rendering of detector findings (the `canlab detect` output). */
import { describeField } from '../analysis/bits';
import type { Findings, IdFindings } from './types';

function conf(c: number): string {
  return c.toFixed(2);
}

export function formatIdFindings(f: IdFindings): string {
  const lines = [
    `${f.key}  ${f.frames} frames, ${f.length} bytes, ${f.byteOrder === 'little_endian' ? 'Intel' : 'Motorola'} order, ${f.constantBits.length} constant bits`,
  ];
  for (const c of f.checksums)
    lines.push(
      `  checksum   ${describeField(c.field)}  ${c.variant}  conf ${conf(c.confidence)}`,
      ...c.evidence.map((e) => `             ${e}`),
    );
  for (const c of f.counters)
    lines.push(
      `  counter    ${describeField(c.field)}  +${c.step} mod ${c.modulus}  conf ${conf(c.confidence)}`,
      ...c.evidence.map((e) => `             ${e}`),
    );
  for (const m of f.multiplexers)
    lines.push(
      `  mux        ${describeField(m.field)}  values ${m.groups.map((g) => g.value).join(',')}  conf ${conf(m.confidence)}`,
      ...m.evidence.map((e) => `             ${e}`),
    );
  for (const s of f.fields) {
    const mux = s.multiplexerValue === undefined ? '' : `  [mux ${s.multiplexerValue}]`;
    lines.push(
      `  field      ${describeField(s.field)}  ${s.signed ? 'signed' : 'unsigned'} ${s.minRaw}..${s.maxRaw}${mux}  conf ${conf(s.confidence)}`,
      ...s.evidence.map((e) => `             ${e}`),
    );
  }
  for (const v of f.valueTables)
    lines.push(
      `  values     ${describeField(v.field)}  ${v.values.map((x) => x.value).join(',')}  conf ${conf(v.confidence)}`,
    );
  for (const g of f.flags) {
    const mux = g.multiplexerValue === undefined ? '' : `  [mux ${g.multiplexerValue}]`;
    lines.push(
      `  flag       ${describeField(g.field)}  ${g.toggles} toggles, on ${(g.onRatio * 100).toFixed(0)}%${mux}  conf ${conf(g.confidence)}`,
    );
  }
  return lines.join('\n') + '\n';
}

export function formatFindings(findings: Findings): string {
  return findings.ids.map(formatIdFindings).join('\n');
}
