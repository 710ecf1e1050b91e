import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ApiError, OfflineError, readableError } from '../api';
import { ClassPicker, type OntologyClass } from '../components/class-picker';
import { ConflictDialog } from '../components/conflict-dialog';
import { KeyHelp } from '../components/key-help';
import { Problem } from '../components/problem';
import { useApp } from '../context';
import { REVIEW_KEYS, type ReviewCommand, commandOf } from '../lib/keys';
import { loadImage, MediaUrls } from '../lib/media';
import { FramePainter, zoomOnWheel, type Box, type PaintedObject } from '../lib/painter';
import { fetchQueuePage, useQueueFilters, type QueueItem } from '../lib/queue';
import { useKeydown } from '../lib/use-keydown';
import { navigate, useLocation, withQuery } from '../router';

/** An object as GET /api/frames/{id}/objects and the review route answer it. */
interface FrameObject extends PaintedObject {
  frame_id: string;
  conf: number | null;
  source: string;
  version: number;
  attrs: Record<string, unknown>;
}

interface FrameData {
  frame: { id: string; width: number; height: number; index: number; session_id: string };
  objects: FrameObject[];
  image: HTMLImageElement;
}

/** A decision on its way to the API (kept, in order, while the connection is lost). */
interface Intent {
  objectId: string;
  action: 'accept' | 'reject' | 'relabel';
  className: string | null;
  expectedVersion: number;
  timeSpentMs: number;
  before: { state: string; class_name: string; attrs: Record<string, unknown> };
}

/** One decision, kept so it can be undone and redone. */
interface Decision {
  objectId: string;
  action: 'accept' | 'reject' | 'relabel';
  className: string | null;
  before: { state: string; class_name: string; attrs: Record<string, unknown> };
  /** The object's version after the decision (or after its undo, for a redo). */
  version: number;
}

const PAGE = 200;
/** How often decisions kept while offline are tried again (and at once when the browser is back online). */
const RETRY_MS = 2000;
/** Frames fetched ahead in the direction of travel. */
const PREFETCH = 4;
/** Frames kept in memory (images included); the oldest go first. */
const CACHE = 24;

/**
 * Keyboard rapid review: one object at a time, zoomed to it with its surroundings, decided with one
 * key and the next one shown at once (bindings in lib/keys.ts, shown on `?`). Frames ahead in the
 * direction of travel are fetched while the reviewer decides.
 */
export function ReviewView() {
  const { api, session } = useApp();
  const filters = useQueueFilters();
  const { query } = useLocation();
  const media = useMemo(() => new MediaUrls(api), [api]);
  const [items, setItems] = useState<QueueItem[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [at, setAt] = useState(0);
  const [loaded, setLoaded] = useState(false);
  const [current, setCurrent] = useState<FrameData | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [picking, setPicking] = useState(false);
  const [help, setHelp] = useState(false);
  const [classes, setClasses] = useState<OntologyClass[]>([]);
  const [undoStack, setUndo] = useState<Decision[]>([]);
  const [redoStack, setRedo] = useState<Decision[]>([]);
  const [pending, setPending] = useState<Intent[]>(() => loadPending(session.user.id));
  const [conflict, setConflict] = useState<{
    intent: Intent;
    theirs: FrameObject & { class_name: string };
  } | null>(null);
  const pendingRef = useRef<Intent[]>(pending);
  const flushing = useRef(false);
  const canvas = useRef<HTMLCanvasElement>(null);
  const painter = useRef<FramePainter | null>(null);
  /** Frames fetched or on their way; `data` once arrived, to paint without waiting for a promise. */
  const cache = useRef(new Map<string, { loading: Promise<FrameData>; data?: FrameData }>());
  const shownAt = useRef(performance.now());
  const direction = useRef(1);

  const item = items[at] ?? null;
  /** Where the review is, as the last key press left it (a render may not have followed yet). */
  const atRef = useRef(at);
  atRef.current = at;

  const frameData = (frameId: string): Promise<FrameData> => {
    const hit = cache.current.get(frameId);
    if (hit) {
      cache.current.delete(frameId);
      cache.current.set(frameId, hit); // most recently used last
      return hit.loading;
    }
    const entry: { loading: Promise<FrameData>; data?: FrameData } = {
      loading: Promise.all([
        api.get<FrameData['frame']>(`/api/frames/${frameId}`),
        api.get<{ items: FrameObject[] }>(`/api/frames/${frameId}/objects`),
        media.frameImage(frameId).then((url) => loadImage(url)),
      ]).then(([frame, objects, image]) => (entry.data = { frame, objects: objects.items, image })),
    };
    entry.loading.catch(() => cache.current.delete(frameId));
    cache.current.set(frameId, entry);
    while (cache.current.size > CACHE) cache.current.delete(cache.current.keys().next().value!);
    return entry.loading;
  };

  /** Paints an object of a frame, zoomed to it; `now` paints before this key press returns. */
  const showObject = (data: FrameData, objectId: string, now = false) => {
    const p = painter.current;
    if (!p) return;
    const target = data.objects.find((o) => o.id === objectId);
    p.setFrame(data.image, data.frame.width, data.frame.height);
    p.setObjects(data.objects, objectId);
    if (target) p.fitBox(target.bbox as Box, 3);
    else p.fitFrame();
    if (now) p.paintNow();
  };

  // The queue, with the object of a deep link first when it is not on the first page.
  useEffect(() => {
    const abort = new AbortController();
    setLoaded(false);
    (async () => {
      const page = await fetchQueuePage(api, filters, null, PAGE, abort.signal);
      const wanted = query.get('object');
      let list = page.items;
      if (wanted && !list.some((i) => i.object_id === wanted)) {
        const o = await api.get<FrameObject & { class_name: string }>(`/api/objects/${wanted}`);
        list = [{ ...queueItemOf(o), session_id: filters.session_id }, ...list];
      }
      setItems(list);
      setCursor(page.next_cursor);
      setAt(
        Math.max(
          0,
          list.findIndex((i) => i.object_id === wanted),
        ),
      );
      setLoaded(true);
    })().catch((err: unknown) => {
      if ((err as Error).name !== 'AbortError') setError(readableError(err));
    });
    return () => abort.abort();
  }, [filters.session_id, filters.class_name, filters.state]);

  useEffect(() => {
    api
      .get<{ classes: OntologyClass[] }>('/api/ontology')
      .then((o) => setClasses(o.classes))
      .catch((err: unknown) => setError(readableError(err)));
  }, []);

  useEffect(() => {
    if (!canvas.current) return;
    const p = new FramePainter(canvas.current);
    p.onPainted = () => {
      if (canvas.current) canvas.current.dataset.painted = p.selectedId ?? '';
    };
    painter.current = p;
    p.resize();
    const observer = new ResizeObserver(() => p.resize());
    observer.observe(canvas.current);
    return () => observer.disconnect();
  }, [loaded]);

  // Show the current object: its frame (from the cache when prefetched), zoomed to it.
  useEffect(() => {
    if (!item) return;
    shownAt.current = performance.now();
    navigate(withQuery('/review', { ...filters, object: item.object_id }), { replace: true });
    let stale = false;
    frameData(item.frame_id)
      .then((data) => {
        if (stale) return;
        setCurrent(data);
        if (painter.current?.selectedId !== item.object_id) showObject(data, item.object_id);
      })
      .catch((err: unknown) => !stale && setError(readableError(err)));
    for (let k = 1; k <= PREFETCH; k++) {
      const ahead = items[at + k * direction.current];
      if (ahead) frameData(ahead.frame_id).catch(() => undefined); // shown when it is reached
    }
    // The queue grows as the reviewer nears its end.
    if (cursor && at > items.length - 20) {
      const after = cursor;
      setCursor(null);
      fetchQueuePage(api, filters, after, PAGE)
        .then((page) => {
          setItems((prev) => [
            ...prev,
            ...page.items.filter((i) => !prev.some((p) => p.object_id === i.object_id)),
          ]);
          setCursor(page.next_cursor);
        })
        .catch((err: unknown) => setError(readableError(err)));
    }
    return () => {
      stale = true;
    };
  }, [item?.object_id, loaded]);

  const move = (by: number) => {
    direction.current = by >= 0 ? 1 : -1;
    const next = Math.min(items.length - 1, Math.max(0, atRef.current + by));
    atRef.current = next;
    setAt(next);
    // A prefetched frame is painted at once, not after the render and its effects (two frames later).
    const target = items[next];
    const data = target && cache.current.get(target.frame_id)?.data;
    if (data) showObject(data, target.object_id, true);
  };

  /** The first object of the next (or previous) frame in the queue. */
  const moveFrame = (by: 1 | -1) => {
    if (!item) return;
    let i = at;
    while (items[i + by] && items[i + by]!.frame_id === item.frame_id) i += by;
    move(i + by - at);
  };

  /** Applies a review and records it in the object's row of the queue and of its frame. */
  const applyReview = async (objectId: string, body: Record<string, unknown>) => {
    const o = await api.post<FrameObject>(`/api/objects/${objectId}/review`, {
      reviewer: session.user.name ?? session.user.email,
      ...body,
    });
    setItems((prev) =>
      prev.map((i) =>
        i.object_id === objectId ? { ...i, state: o.state, class_name: o.class_name, version: o.version } : i,
      ),
    );
    const data = await cache.current.get(o.frame_id)?.loading;
    if (data) {
      data.objects = data.objects.map((x) => (x.id === objectId ? { ...x, ...o } : x));
      if (item?.frame_id === o.frame_id) painter.current?.setObjects(data.objects);
    }
    return o;
  };

  /** Sends one decision; a lost connection keeps it for later, a conflict opens the side-by-side view. */
  const send = async (intent: Intent): Promise<'sent' | 'kept' | 'conflict'> => {
    try {
      const o = await applyReview(intent.objectId, {
        action: intent.action,
        class_name: intent.className,
        expected_version: intent.expectedVersion,
        time_spent_ms: intent.timeSpentMs,
      });
      setUndo((u) => [...u, { ...intent, version: o.version }]);
      setRedo([]);
      return 'sent';
    } catch (err) {
      if (err instanceof OfflineError) return 'kept';
      if (err instanceof ApiError && err.status === 409) {
        const theirs = await api.get<FrameObject & { class_name: string }>(`/api/objects/${intent.objectId}`);
        // A retry whose first attempt landed (its answer lost with the connection) finds its own result.
        if (
          theirs.state === intendedState(intent.action) &&
          theirs.class_name === (intent.className ?? intent.before.class_name)
        )
          return 'sent';
        setConflict({ intent, theirs });
        return 'conflict';
      }
      throw err;
    }
  };

  const decide = async (action: Decision['action'], className: string | null = null) => {
    if (!item || busy || conflict) return;
    const before = current?.objects.find((o) => o.id === item.object_id);
    const intent: Intent = {
      objectId: item.object_id,
      action,
      className,
      expectedVersion: item.version,
      timeSpentMs: Math.round(performance.now() - shownAt.current),
      before: { state: item.state, class_name: item.class_name, attrs: before?.attrs ?? {} },
    };
    setBusy(true);
    setError(null);
    try {
      if (pending.length) {
        // Decisions keep their order: behind the ones still waiting for the connection.
        setPending((p) => [...p, intent]);
        move(1);
        return;
      }
      const outcome = await send(intent);
      if (outcome === 'kept') setPending((p) => [...p, intent]);
      if (outcome !== 'conflict') move(1);
    } catch (err) {
      setError(readableError(err));
    } finally {
      setBusy(false);
    }
  };

  /** Sends the decisions a lost connection kept, in order, until one cannot go yet. */
  const flush = async () => {
    if (flushing.current || conflict) return;
    flushing.current = true;
    try {
      for (;;) {
        const next = pendingRef.current[0];
        if (!next) break;
        const outcome = await send(next);
        if (outcome === 'kept') break;
        setPending((p) => p.slice(1));
        pendingRef.current = pendingRef.current.slice(1);
        if (outcome === 'conflict') break;
      }
    } catch (err) {
      setError(readableError(err));
    } finally {
      flushing.current = false;
    }
  };

  useEffect(() => {
    pendingRef.current = pending;
    savePending(session.user.id, pending);
    if (!pending.length) return;
    const timer = setInterval(() => void flush(), RETRY_MS);
    window.addEventListener('online', flush);
    return () => {
      clearInterval(timer);
      window.removeEventListener('online', flush);
    };
  }, [pending, conflict]);

  /** The three ways out of a conflict, one key each. */
  const resolve = async (how: 'mine' | 'theirs' | 'merge') => {
    if (!conflict || busy) return;
    const { intent, theirs } = conflict;
    setBusy(true);
    try {
      if (how === 'theirs') {
        setItems((prev) =>
          prev.map((i) =>
            i.object_id === theirs.id
              ? { ...i, state: theirs.state, class_name: theirs.class_name, version: theirs.version }
              : i,
          ),
        );
      } else {
        // Mine: my decision and the class I saw, over their version. Merge: my decision on their version.
        const o = await applyReview(intent.objectId, {
          action: how === 'mine' ? 'edit' : intent.action,
          state: how === 'mine' ? intendedState(intent.action) : null,
          class_name: how === 'mine' ? (intent.className ?? intent.before.class_name) : intent.className,
          expected_version: theirs.version,
        });
        setUndo((u) => [...u, { ...intent, version: o.version }]);
      }
      setConflict(null);
      if (items[at]?.object_id === intent.objectId) move(1);
    } catch (err) {
      setError(conflictOrReadable(err));
    } finally {
      setBusy(false);
    }
  };

  /** Undo puts the state, class and attributes back (the object stays `human`: a person decided). */
  const undo = async () => {
    const last = undoStack.at(-1);
    if (!last || busy) return;
    setBusy(true);
    try {
      const o = await applyReview(last.objectId, {
        action: 'edit',
        state: last.before.state,
        class_name: last.before.class_name,
        attrs: last.before.attrs,
        expected_version: last.version,
      });
      setUndo((u) => u.slice(0, -1));
      setRedo((r) => [...r, { ...last, version: o.version }]);
      goTo(last.objectId);
    } catch (err) {
      setError(conflictOrReadable(err));
    } finally {
      setBusy(false);
    }
  };

  const redo = async () => {
    const next = redoStack.at(-1);
    if (!next || busy) return;
    setBusy(true);
    try {
      const o = await applyReview(next.objectId, {
        action: next.action,
        class_name: next.className,
        expected_version: next.version,
      });
      setRedo((r) => r.slice(0, -1));
      setUndo((u) => [...u, { ...next, version: o.version }]);
      goTo(next.objectId, 1);
    } catch (err) {
      setError(conflictOrReadable(err));
    } finally {
      setBusy(false);
    }
  };

  const goTo = (objectId: string, after = 0) => {
    const i = items.findIndex((x) => x.object_id === objectId);
    if (i >= 0) setAt(Math.min(items.length - 1, i + after));
  };

  const run = (command: ReviewCommand) => {
    const actions: Record<ReviewCommand, () => unknown> = {
      accept: () => decide('accept'),
      reject: () => decide('reject'),
      relabel: () => setPicking(true),
      next: () => move(1),
      previous: () => move(-1),
      nextFrame: () => moveFrame(1),
      previousFrame: () => moveFrame(-1),
      undo,
      redo,
      fitObject: () => {
        const o = current?.objects.find((x) => x.id === item?.object_id);
        if (o) painter.current?.fitBox(o.bbox as Box, 3);
      },
      fitFrame: () => painter.current?.fitFrame(),
      openEditor: () =>
        item && navigate(withQuery('/editor', { frame: item.frame_id, object: item.object_id })),
      help: () => setHelp((h) => !h),
    };
    void actions[command]();
  };

  useKeydown((e) => {
    if (picking) return;
    if (conflict) {
      const how = ({ '1': 'mine', '2': 'theirs', '3': 'merge' } as const)[e.key as '1' | '2' | '3'];
      if (how) void resolve(how);
      else if (e.key === 'Escape') setConflict(null);
      else return;
      e.preventDefault();
      return;
    }
    if (e.key === 'Escape' && help) return setHelp(false);
    const command = commandOf(e);
    if (!command) return;
    e.preventDefault();
    run(command);
  });

  const object = current?.objects.find((o) => o.id === item?.object_id) ?? null;

  if (!loaded)
    return (
      <main class="page">
        <Problem message={error} />
        {!error && <p class="muted">Loading the queue…</p>}
      </main>
    );
  if (items.length === 0)
    return (
      <main class="page">
        <h1>Nothing to review</h1>
        <p>
          No object waits with these filters. <a href={withQuery('/queue', filters)}>Back to the queue</a>.
        </p>
      </main>
    );

  return (
    <main class="review">
      <section class="stage">
        <canvas
          ref={canvas}
          class="frame-canvas"
          aria-label="Frame"
          onWheel={(e) => zoomOnWheel(painter.current, e)}
          onPointerMove={(e) => {
            if (e.buttons !== 1) return;
            const ratio = window.devicePixelRatio || 1;
            painter.current?.panBy(e.movementX * ratio, e.movementY * ratio);
          }}
        />
      </section>
      <aside class="panel" aria-label="Object">
        <div class="progress" data-testid="progress">
          {at + 1} / {items.length}
          {cursor ? '+' : ''}
        </div>
        {item && (
          <dl class="facts" data-testid="object-facts">
            <dt>Class</dt>
            <dd data-testid="class">{item.class_name}</dd>
            <dt>State</dt>
            <dd>
              <span class={`state state-${item.state}`} data-testid="state">
                {item.state}
              </span>
            </dd>
            <dt>Confidence</dt>
            <dd>{item.conf === null ? '—' : item.conf.toFixed(2)}</dd>
            <dt>Source</dt>
            <dd>{object?.source ?? item.source}</dd>
            <dt>Version</dt>
            <dd>{item.version}</dd>
            <dt>Paths</dt>
            <dd>{item.paths?.join(', ') ?? '—'}</dd>
            <dt>Why now</dt>
            <dd>
              uncertainty {item.uncertainty.toFixed(2)} × rarity {item.rarity.toFixed(2)}
            </dd>
          </dl>
        )}
        <Problem message={error} />
        {pending.length > 0 && (
          <div class="offline" role="status">
            Offline: {pending.length} {pending.length === 1 ? 'decision waits' : 'decisions wait'} to be sent.
            They go as soon as the connection is back.
          </div>
        )}
        <p class="hint">
          <kbd>A</kbd> accept · <kbd>R</kbd> reject · <kbd>C</kbd> relabel · <kbd>Tab</kbd> next ·{' '}
          <kbd>?</kbd> all keys
        </p>
      </aside>
      {conflict && (
        <ConflictDialog
          mine={[
            ['Decision', conflict.intent.action],
            ['State', intendedState(conflict.intent.action)],
            ['Class', conflict.intent.className ?? conflict.intent.before.class_name],
            ['Version seen', conflict.intent.expectedVersion],
          ]}
          theirs={[
            ['Source', conflict.theirs.source],
            ['State', conflict.theirs.state],
            ['Class', conflict.theirs.class_name],
            ['Version', conflict.theirs.version],
          ]}
          choices={
            <>
              <kbd>1</kbd> keep mine · <kbd>2</kbd> take theirs · <kbd>3</kbd> merge (my decision on their
              version) · <kbd>Esc</kbd> decide later
            </>
          }
        />
      )}
      {picking && (
        <ClassPicker
          classes={classes}
          onCancel={() => setPicking(false)}
          onPick={(name) => {
            setPicking(false);
            void decide('relabel', name);
          }}
        />
      )}
      {help && <KeyHelp title="Keyboard shortcuts" bindings={REVIEW_KEYS} />}
    </main>
  );
}

/** A 409 says what happened in words a reviewer can act on. */
function conflictOrReadable(err: unknown): string {
  if (err instanceof ApiError && err.status === 409)
    return `Someone else changed this object meanwhile (${err.readable}). Nothing was overwritten; reload to see their version.`;
  return readableError(err);
}

function queueItemOf(o: FrameObject & { class_name: string }): QueueItem {
  return {
    object_id: o.id,
    frame_id: o.frame_id,
    session_id: '',
    class_name: o.class_name,
    l1: '',
    conf: o.conf,
    state: o.state,
    source: o.source,
    version: o.version,
    score: 0,
    uncertainty: 0,
    rarity: 0,
    paths: null,
  };
}

const intendedState = (action: Intent['action']) => (action === 'reject' ? 'rejected' : 'accepted');

/** Unsent decisions survive a reload: they are kept per user in this browser. */
const pendingKey = (userId: string) => `drivelab.pending-decisions.${userId}`;
function loadPending(userId: string): Intent[] {
  try {
    return JSON.parse(window.localStorage.getItem(pendingKey(userId)) ?? '[]') as Intent[];
  } catch {
    return [];
  }
}
function savePending(userId: string, pending: Intent[]): void {
  if (pending.length) window.localStorage.setItem(pendingKey(userId), JSON.stringify(pending));
  else window.localStorage.removeItem(pendingKey(userId));
}
