import { useEffect, useState } from 'preact/hooks';
import { readableError, type ApiClient } from '../api';
import { kindOf, type Shape } from '../lib/shapes';
import { Problem } from './problem';

/** An object as the editor holds it: the API's fields plus its mask polygons. */
export interface EditorObject extends Shape {
  id: string;
  frame_id: string;
  class_id: number;
  class_name: string;
  conf: number | null;
  source: string;
  state: string;
  version: number;
  attrs: Record<string, unknown>;
  mask_uri: string | null;
  cuboid_3d: Record<string, unknown> | null;
}

/** GET /api/objects/{id}/explain, the parts the panel shows (docs/annotations.md, Explain). */
interface Explain {
  class: { name: string; l1: string };
  queue: { score: number; uncertainty: number; rarity: number; in_queue: boolean; position: number | null };
  provenance: {
    paths: string[] | null;
    raw_confidences: Record<string, number> | null;
    agreement: number | null;
    entropy: number | null;
    quality_flags: string[] | null;
    route: { state: string; reason: string; demoted_by_critic: boolean } | null;
    critic: { vetoes: Array<{ check: string; detail?: unknown }> | null; ran: string[] | null } | null;
    verifier: Record<string, unknown> | null;
  };
  threshold: { value: number | null; basis: string; clears: boolean | null };
}

interface HistoryEvent {
  at: string;
  kind: 'review' | 'audit';
  action: string;
  reviewer?: string;
  before?: Record<string, unknown> | null;
  after?: Record<string, unknown> | null;
  detail?: Record<string, unknown> | null;
}

const REVIEW_AUDITS = new Set(['object.reviewed', 'object.mask.replaced']);

const fmt = (n: number | null | undefined, digits = 2) =>
  n === null || n === undefined ? '—' : n.toFixed(digits);

/** What one history event changed, in a few words. */
function eventSummary(e: HistoryEvent): string {
  if (e.kind === 'audit') return e.action.replace(/^object\./, '');
  const b = e.before ?? {};
  const a = e.after ?? {};
  const parts = [e.action];
  if (b.state !== a.state && a.state !== undefined) parts.push(`${String(b.state)} → ${String(a.state)}`);
  if (b.class_id !== a.class_id && a.class_id !== undefined) parts.push('class changed');
  if (e.reviewer) parts.push(`by ${e.reviewer}`);
  return parts.join(' · ');
}

/**
 * The selected object: its facts, why it is where it is (explain: paths, raw confidences,
 * agreement, critic, verifier, threshold), its attributes (editable) and its history timeline.
 * `revision` changes whenever the object is written, so the reads follow.
 */
export function ObjectPanel(props: {
  api: ApiClient;
  object: EditorObject;
  revision: number;
  onSaveAttrs: (attrs: Record<string, unknown>) => Promise<void>;
}) {
  const { api, object } = props;
  const [explain, setExplain] = useState<Explain | null>(null);
  const [history, setHistory] = useState<HistoryEvent[] | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let stale = false;
    setError(null);
    Promise.all([
      api.get<Explain>(`/api/objects/${object.id}/explain`),
      api.get<{ events: HistoryEvent[] }>(`/api/objects/${object.id}/history`),
    ])
      .then(([x, h]) => {
        if (stale) return;
        setExplain(x);
        // A review's own audit entry says the same as the review record beside it.
        setHistory(h.events.filter((e) => !(e.kind === 'audit' && REVIEW_AUDITS.has(e.action))));
      })
      .catch((err: unknown) => !stale && setError(readableError(err)));
    return () => {
      stale = true;
    };
  }, [object.id, props.revision]);

  const p = explain?.provenance;
  return (
    <div class="object-panel" data-testid="object-panel">
      <dl class="facts">
        <dt>Class</dt>
        <dd data-testid="class">
          {object.class_name}
          {explain && <span class="muted"> · {explain.class.l1}</span>}
        </dd>
        <dt>Shape</dt>
        <dd data-testid="shape">
          {kindOf(object)}
          {kindOf(object) === 'box' && object.rot_deg ? ` · ${object.rot_deg}°` : ''}
          {object.cuboid_3d ? ' · has a 3D cuboid' : ''}
        </dd>
        <dt>State</dt>
        <dd>
          <span class={`state state-${object.state}`} data-testid="state">
            {object.state}
          </span>
        </dd>
        <dt>Confidence</dt>
        <dd>{fmt(object.conf)}</dd>
        <dt>Source</dt>
        <dd>{object.source}</dd>
        <dt>Version</dt>
        <dd data-testid="version">{object.version}</dd>
      </dl>
      <Problem message={error} />
      <details open>
        <summary>Why and from where</summary>
        {explain ? (
          <dl class="facts" data-testid="provenance">
            <dt>Queue</dt>
            <dd>
              {explain.queue.in_queue ? `#${explain.queue.position}` : 'not in the queue'} · uncertainty{' '}
              {fmt(explain.queue.uncertainty)} × rarity {fmt(explain.queue.rarity)}
            </dd>
            <dt>Paths</dt>
            <dd>{p?.paths?.join(', ') ?? 'none recorded (drawn or imported)'}</dd>
            <dt>Raw confidences</dt>
            <dd>
              {p?.raw_confidences
                ? Object.entries(p.raw_confidences)
                    .map(([k, v]) => `${k} ${fmt(v)}`)
                    .join(', ')
                : '—'}
            </dd>
            <dt>Agreement</dt>
            <dd>
              {fmt(p?.agreement)} (entropy {fmt(p?.entropy)})
            </dd>
            <dt>Routing</dt>
            <dd>{p?.route ? `${p.route.state}: ${p.route.reason}` : '—'}</dd>
            <dt>Critic</dt>
            <dd>
              {p?.critic
                ? p.critic.vetoes?.length
                  ? p.critic.vetoes
                      .map((v) => `${v.check}${v.detail ? ` ${JSON.stringify(v.detail)}` : ''}`)
                      .join('; ')
                  : `no veto (ran ${p.critic.ran?.join(', ') || 'nothing'})`
                : '—'}
            </dd>
            <dt>Verifier</dt>
            <dd>{p?.verifier ? JSON.stringify(p.verifier) : '—'}</dd>
            <dt>Threshold</dt>
            <dd>
              {fmt(explain.threshold.value)} ({explain.threshold.basis})
              {explain.threshold.clears === null
                ? ''
                : explain.threshold.clears
                  ? ', cleared'
                  : ', not cleared'}
            </dd>
          </dl>
        ) : (
          <p class="muted">Loading…</p>
        )}
      </details>
      <AttributesEditor
        key={`${object.id}:${object.version}`}
        attrs={object.attrs}
        onSave={props.onSaveAttrs}
      />
      <details open>
        <summary>History</summary>
        <ol class="timeline" data-testid="history">
          {history?.map((e, i) => (
            <li key={i}>
              <time dateTime={e.at}>{new Date(e.at).toLocaleString()}</time>
              <span>{eventSummary(e)}</span>
            </li>
          ))}
        </ol>
      </details>
    </div>
  );
}

/** A value as typed: JSON when it reads as JSON (numbers, true, lists), else the text itself. */
function parseValue(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

const showValue = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

/** Attributes as key and value fields; saving sends the changed and added keys (the API merges). */
function AttributesEditor(props: {
  attrs: Record<string, unknown>;
  onSave: (attrs: Record<string, unknown>) => Promise<void>;
}) {
  const [rows, setRows] = useState(() =>
    Object.entries(props.attrs).map(([k, v]) => ({ key: k, value: showValue(v) })),
  );
  const [saving, setSaving] = useState(false);
  const changed = rows.filter(
    (r) => r.key.trim() && (!(r.key in props.attrs) || showValue(props.attrs[r.key]) !== r.value),
  );
  const save = async () => {
    setSaving(true);
    try {
      await props.onSave(Object.fromEntries(changed.map((r) => [r.key.trim(), parseValue(r.value)])));
    } finally {
      setSaving(false);
    }
  };
  return (
    <details open>
      <summary>Attributes</summary>
      <form
        class="attrs"
        aria-label="Attributes"
        onSubmit={(e) => {
          e.preventDefault();
          if (changed.length) void save();
        }}
      >
        {rows.map((r, i) => (
          <div class="attr" key={i}>
            <input
              aria-label="Attribute name"
              value={r.key}
              readOnly={r.key in props.attrs}
              onInput={(e) =>
                setRows(rows.map((x, k) => (k === i ? { ...x, key: e.currentTarget.value } : x)))
              }
            />
            <input
              aria-label={`Value of ${r.key || 'the new attribute'}`}
              value={r.value}
              onInput={(e) =>
                setRows(rows.map((x, k) => (k === i ? { ...x, value: e.currentTarget.value } : x)))
              }
            />
          </div>
        ))}
        <div class="attr-actions">
          <button type="button" class="quiet" onClick={() => setRows([...rows, { key: '', value: '' }])}>
            Add attribute
          </button>
          <button type="submit" disabled={!changed.length || saving}>
            Save attributes
          </button>
        </div>
      </form>
    </details>
  );
}
