/**
 * The records `search` and `fetch` serve (the connector contract: search(query) → results of
 * id, title, url; fetch(id) → the full record with text and metadata): ids, defined signals,
 * detector findings, marks and memory entries, built from the workspace on each call.
 *
 * Record ids: `id:0x123`, `signal:0x123:Name`, `finding:0x123:<kind>:<n>` (n counts the id's
 * candidates of that kind, in detector order; findings are recomputed when frames change, so n is
 * stable only while the frames are), `mark:<n>`, `memory:<key>`. URLs are `canlab://<id with / for :>`.
 */
import { describeField, formatId } from '../analysis/bits';
import { formatRanges } from '../analysis/ids';
import type { Candidate } from '../detect/types';
import type { WorkspaceApi } from '../workspace/types';
import { signalView } from './tools/signals';

export interface SearchRecord {
  id: string;
  title: string;
  url: string;
  text: string;
  metadata: Record<string, unknown>;
}

function record(id: string, title: string, text: string, metadata: Record<string, unknown>): SearchRecord {
  return { id, title, url: `canlab://${id.replace(/:/g, '/')}`, text, metadata };
}

const KIND_WORDS: Record<Candidate['kind'], string> = {
  counter: 'counter',
  checksum: 'checksum crc',
  field: 'signal field boundary',
  flag: 'flag bit',
  value_table: 'value table enum state',
  multiplexer: 'multiplexer mux selector',
};

export function searchRecords(ws: WorkspaceApi): SearchRecord[] {
  const out: SearchRecord[] = [];
  for (const s of ws.idStats())
    out.push(
      record(
        `id:${s.key}`,
        `Id ${s.key}: ${s.count} frames, ${s.meanRateHz.toFixed(1)} Hz`,
        `id ${s.key} count ${s.count} rate ${s.meanRateHz.toFixed(2)} Hz period ${s.meanPeriodMs.toFixed(2)} ms dlc ${s.dlcs.join(',')} moving bytes ${s.movingBytes.join(',') || 'none'} moving bits ${formatRanges(s.movingBits)}`,
        {
          id: s.key,
          count: s.count,
          rateHz: s.meanRateHz,
          dlcs: s.dlcs,
          movingBytes: s.movingBytes,
        },
      ),
    );
  for (const d of ws.signals()) {
    const key = formatId(d.messageId, d.extended);
    const s = d.signal;
    out.push(
      record(
        `signal:${key}:${s.name}`,
        `Signal ${s.name} on ${key}`,
        `signal ${s.name} id ${key} ${describeField(s)} ${s.signed ? 'signed' : 'unsigned'} factor ${s.factor} offset ${s.offset} unit ${s.unit} ${s.comment ?? ''}`,
        signalView(d),
      ),
    );
  }
  if (ws.status().frameCount > 0) {
    for (const idf of ws.findings().ids) {
      const candidates: Candidate[] = [
        ...idf.counters,
        ...idf.checksums,
        ...idf.fields,
        ...idf.flags,
        ...idf.valueTables,
        ...idf.multiplexers,
      ];
      const seen = new Map<string, number>();
      for (const c of candidates) {
        const n = seen.get(c.kind) ?? 0;
        seen.set(c.kind, n + 1);
        const title = `${c.kind.replace('_', ' ')} on ${idf.key} at ${describeField(c.field)}`;
        out.push(
          record(
            `finding:${idf.key}:${c.kind}:${n}`,
            title,
            `${KIND_WORDS[c.kind]} id ${idf.key} ${describeField(c.field)} confidence ${c.confidence.toFixed(2)} ${c.evidence.join(' ')}`,
            { id: idf.key, ...c },
          ),
        );
      }
    }
  }
  for (const m of ws.marks()) {
    const when = m.kind === 'point' ? `point at ${m.start} s` : `interval ${m.start}–${m.end ?? 'open'} s`;
    out.push(
      record(
        `mark:${m.id}`,
        `Mark ${m.label}: ${when}`,
        `mark annotation ${m.label} ${m.kind} ${when} source ${m.source}`,
        { ...m },
      ),
    );
  }
  for (const e of ws.memory())
    out.push(record(`memory:${e.key}`, `Memory ${e.key}`, `memory ${e.key} ${e.value}`, { ...e }));
  return out;
}

/**
 * Records matching the query, best first: each query word found in the title scores 2, in the
 * id or text 1; records matching no word are left out. An empty query lists everything.
 */
export function searchWorkspace(ws: WorkspaceApi, query: string, limit: number): SearchRecord[] {
  const words = query.toLowerCase().split(/\s+/).filter(Boolean);
  const records = searchRecords(ws);
  if (words.length === 0) return records.slice(0, limit);
  const scored = records
    .map((r, order) => {
      const title = r.title.toLowerCase();
      const body = `${r.id} ${r.text}`.toLowerCase();
      const score = words.reduce((sum, w) => sum + (title.includes(w) ? 2 : body.includes(w) ? 1 : 0), 0);
      return { r, score, order };
    })
    .filter((s) => s.score > 0)
    .sort((a, b) => b.score - a.score || a.order - b.order);
  return scored.slice(0, limit).map((s) => s.r);
}
