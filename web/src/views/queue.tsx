import { useEffect, useRef, useState } from 'preact/hooks';
import { readableError } from '../api';
import { Problem } from '../components/problem';
import { useApp } from '../context';
import { fetchQueuePage, OBJECT_STATES, useQueueFilters, type QueueItem } from '../lib/queue';
import { navigate, withQuery } from '../router';

const PAGE = 100;

const fmt = (n: number | null, digits = 2) => (n === null ? '—' : n.toFixed(digits));

/**
 * The review queue: objects ranked by uncertainty × class rarity, filtered by session, class and
 * state, loaded a page at a time as the list scrolls; the jobs stream says when an auto-label adds
 * objects, and the reviewer decides when the list is reloaded (it never moves under their hands).
 */
export function QueueView() {
  const { api } = useApp();
  const filters = useQueueFilters();
  const [items, setItems] = useState<QueueItem[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [loading, setLoading] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [fresh, setFresh] = useState(0);
  const [generation, setGeneration] = useState(0);
  const [classes, setClasses] = useState<string[]>([]);
  const sentinel = useRef<HTMLDivElement>(null);
  const key = `${filters.session_id}|${filters.class_name}|${filters.state}|${generation}`;

  const load = async (after: string | null, replace: boolean, signal?: AbortSignal) => {
    setLoading(true);
    setError(null);
    try {
      const page = await fetchQueuePage(api, filters, after, PAGE, signal);
      setItems((prev) => (replace ? page.items : [...prev, ...page.items]));
      setCursor(page.next_cursor);
    } catch (err) {
      if ((err as Error).name !== 'AbortError') setError(readableError(err));
    } finally {
      setLoading(false);
    }
  };

  useEffect(() => {
    const abort = new AbortController();
    setItems([]);
    setCursor(null);
    setFresh(0);
    void load(null, true, abort.signal);
    return () => abort.abort();
  }, [key]);

  useEffect(() => {
    api
      .get<{ classes: Array<{ name: string; retired: boolean }> }>('/api/ontology')
      .then((o) => setClasses(o.classes.filter((c) => !c.retired).map((c) => c.name)))
      .catch(() => undefined); // the filter still takes a typed name
  }, []);

  // Infinite scroll: the next page loads when the end of the list comes into view.
  useEffect(() => {
    const el = sentinel.current;
    if (!el || !cursor) return;
    const seen = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting) && !loading) void load(cursor, false);
    });
    seen.observe(el);
    return () => seen.disconnect();
  }, [cursor, loading]);

  // Live: auto-label progress on a session in view means new objects may have joined the queue.
  useEffect(() => {
    const token = api.sessions.get()?.token;
    if (!token) return;
    const stream = new EventSource(`/api/events/jobs?token=${encodeURIComponent(token)}`);
    const onJob = (e: MessageEvent<string>) => {
      const job = JSON.parse(e.data) as { session_id?: string; objects_created?: number };
      if (!filters.session_id || job.session_id === filters.session_id) setFresh((n) => n + 1);
    };
    for (const type of ['autolabel.progress', 'autolabel.completed'])
      stream.addEventListener(type, onJob as EventListener);
    return () => stream.close();
  }, [filters.session_id]);

  const apply = (next: Partial<typeof filters>) =>
    navigate(withQuery('/queue', { ...filters, ...next }), { replace: true });
  const states = new Set(filters.state.split(',').filter(Boolean));

  return (
    <main class="page queue">
      <div class="title-row">
        <h1>Review queue</h1>
        {filters.class_name && (
          <a
            class="button quiet"
            href={withQuery('/grid', filters)}
            onClick={(e) => {
              e.preventDefault();
              navigate(withQuery('/grid', filters));
            }}
          >
            Crop grid of {filters.class_name}
          </a>
        )}
        <a
          class="button"
          href={withQuery('/review', filters)}
          onClick={(e) => {
            e.preventDefault();
            navigate(withQuery('/review', filters));
          }}
        >
          Review with the keyboard
        </a>
      </div>
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          const data = new FormData(e.currentTarget);
          apply({
            session_id: String(data.get('session_id') ?? '').trim(),
            class_name: String(data.get('class_name') ?? '').trim(),
          });
        }}
      >
        <label>
          Session
          <input name="session_id" placeholder="any session (UUID)" value={filters.session_id} />
        </label>
        <label>
          Class
          <input name="class_name" list="classes" placeholder="any class" value={filters.class_name} />
          <datalist id="classes">
            {classes.map((c) => (
              <option key={c} value={c} />
            ))}
          </datalist>
        </label>
        <fieldset>
          <legend>States</legend>
          {OBJECT_STATES.map((s) => (
            <label key={s} class="check">
              <input
                type="checkbox"
                name="state"
                value={s}
                checked={states.has(s)}
                onChange={(e) => {
                  const next = new Set(states);
                  if (e.currentTarget.checked) next.add(s);
                  else next.delete(s);
                  apply({ state: OBJECT_STATES.filter((x) => next.has(x)).join(',') });
                }}
              />
              {s}
            </label>
          ))}
        </fieldset>
        <button type="submit">Apply</button>
      </form>

      {fresh > 0 && (
        <div class="fresh" role="status">
          Auto-label has added objects since this list was loaded.
          <button type="button" onClick={() => setGeneration((g) => g + 1)}>
            Show them
          </button>
        </div>
      )}
      <Problem message={error} onRetry={() => void load(cursor, items.length === 0)} />

      <table class="queue-table">
        <thead>
          <tr>
            <th>#</th>
            <th>Class</th>
            <th>State</th>
            <th title="model confidence">Conf</th>
            <th>Source</th>
            <th>Paths</th>
            <th title="uncertainty × class rarity: the higher, the sooner it needs a person">Why now</th>
            <th>Frame</th>
          </tr>
        </thead>
        <tbody>
          {items.map((item, i) => (
            <tr key={item.object_id} data-object-id={item.object_id}>
              <td class="num">{i + 1}</td>
              <td>
                {item.class_name}
                <span class="l1">{item.l1}</span>
              </td>
              <td>
                <span class={`state state-${item.state}`}>{item.state}</span>
              </td>
              <td class="num">{fmt(item.conf)}</td>
              <td>{item.source}</td>
              <td>{item.paths?.join(', ') ?? '—'}</td>
              <td class="why">
                <span title="uncertainty">{fmt(item.uncertainty)}</span> ×{' '}
                <span title="class rarity">{fmt(item.rarity)}</span> = <strong>{fmt(item.score, 3)}</strong>
              </td>
              <td class="mono">
                <a
                  href={withQuery('/editor', { frame: item.frame_id, object: item.object_id })}
                  title="Open the frame in the editor"
                  onClick={(e) => {
                    e.preventDefault();
                    navigate(withQuery('/editor', { frame: item.frame_id, object: item.object_id }));
                  }}
                >
                  {item.frame_id.slice(0, 8)}
                </a>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <div ref={sentinel} class="sentinel">
        {loading
          ? 'Loading…'
          : items.length === 0 && !error
            ? 'Nothing waits for review with these filters.'
            : cursor
              ? ''
              : `${items.length} objects — the end of the queue.`}
      </div>
    </main>
  );
}
