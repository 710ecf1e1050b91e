import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ApiError, readableError } from '../api';
import { ClassPicker, type OntologyClass } from '../components/class-picker';
import { Problem } from '../components/problem';
import { useApp } from '../context';
import { CropSheets, SHEET_COLS, SHEET_SIZE, sheetPlace, sheetsBetween } from '../lib/crop-sheets';
import { fetchQueuePage, useQueueFilters, type QueueItem } from '../lib/queue';
import {
  click,
  emptySelection,
  moveFocus,
  selectVisible,
  toggleFocused,
  type Selection,
} from '../lib/selection';
import { navigate, withQuery } from '../router';

/** Crop side requested from the server, and the cell it sits in. */
const CROP = 128;
const CELL = 148;
const PAGE = 500;
/** BulkReviewIn takes at most this many objects. */
const BULK_MAX = 1000;
/** Rows drawn above and below the viewport, so a fast scroll shows no gap. */
const OVERSCAN = 2;

type BulkAction = 'accept' | 'reject' | 'relabel';

/** One bulk decision, kept so it can be undone as a whole. */
interface BulkDecision {
  action: BulkAction;
  className: string | null;
  /** Each object's state, class and version before, and its version after. */
  objects: Array<{ id: string; state: string; class_name: string; after: number }>;
}

interface Conflict {
  object_id: string;
  expected: number;
  actual: number;
}

/**
 * A per-class crop grid: the queue's objects of one class as server-rendered crops in rank order,
 * virtualized (only the rows in view are in the page), with file-manager selection and bulk
 * accept, reject and relabel of up to 1,000 objects in one request that carries every version.
 */
export function GridView() {
  const { api, session } = useApp();
  const filters = useQueueFilters();
  const [, setSheetsShown] = useState(0);
  const sheets = useMemo(
    () =>
      new CropSheets(
        api,
        CROP,
        () => setSheetsShown((n) => n + 1),
        (err) => setError(readableError(err)),
      ),
    [api],
  );
  const [items, setItems] = useState<QueueItem[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [loading, setLoading] = useState(false);
  const [sel, setSel] = useState<Selection>(emptySelection);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [conflicts, setConflicts] = useState<Conflict[]>([]);
  const [picking, setPicking] = useState(false);
  const [busy, setBusy] = useState(false);
  const [classes, setClasses] = useState<OntologyClass[]>([]);
  const [undoStack, setUndo] = useState<BulkDecision[]>([]);
  const [box, setBox] = useState({ top: 0, width: 1200, height: 600 });
  const scroller = useRef<HTMLDivElement>(null);
  const order = useMemo(() => items.map((i) => i.object_id), [items]);

  useEffect(() => () => sheets.clear(), [sheets]);

  useEffect(() => {
    api
      .get<{ classes: OntologyClass[] }>('/api/ontology')
      .then((o) => setClasses(o.classes))
      .catch((err: unknown) => setError(readableError(err)));
  }, []);

  const load = async (after: string | null, replace: boolean) => {
    setLoading(true);
    try {
      const page = await fetchQueuePage(api, filters, after, PAGE);
      setItems((prev) => (replace ? page.items : [...prev, ...page.items]));
      setCursor(page.next_cursor);
    } catch (err) {
      setError(readableError(err));
    } finally {
      setLoading(false);
    }
  };

  useEffect(() => {
    if (!filters.class_name) return;
    setItems([]);
    sheets.clear();
    setSel(emptySelection());
    setUndo([]);
    void load(null, true);
  }, [filters.class_name, filters.state, filters.session_id]);

  useEffect(() => {
    const el = scroller.current;
    if (!el) return;
    const measure = () => setBox({ top: el.scrollTop, width: el.clientWidth, height: el.clientHeight });
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(el);
    return () => observer.disconnect();
  }, [filters.class_name]);

  const columns = Math.max(1, Math.floor(box.width / CELL));
  const rows = Math.ceil(items.length / columns);
  const firstRow = Math.max(0, Math.floor(box.top / CELL) - OVERSCAN);
  const lastRow = Math.min(rows - 1, Math.ceil((box.top + box.height) / CELL) + OVERSCAN);
  const firstVisible = Math.floor(box.top / CELL) * columns;
  const lastVisible = Math.min(items.length - 1, Math.ceil((box.top + box.height) / CELL) * columns - 1);

  // The crops of the rows drawn come as sheets of 64, in rank order.
  const lastDrawn = Math.min(items.length - 1, (lastRow + 1) * columns - 1);
  const sheetIds = (sheet: number) => order.slice(sheet * SHEET_SIZE, (sheet + 1) * SHEET_SIZE);
  useEffect(() => {
    for (const sheet of sheetsBetween(firstRow * columns, lastDrawn)) sheets.request(sheet, sheetIds(sheet));
  }, [firstRow, lastDrawn, columns, order]);

  // The next page loads when the last rows come near.
  useEffect(() => {
    if (cursor && !loading && lastRow >= rows - 3) void load(cursor, false);
  }, [lastRow, rows, cursor, loading]);

  // The focused cell stays in view when the keyboard moves it.
  useEffect(() => {
    const el = scroller.current;
    if (!el) return;
    const row = Math.floor(sel.focus / columns);
    if (row * CELL < el.scrollTop) el.scrollTop = row * CELL;
    else if ((row + 1) * CELL > el.scrollTop + el.clientHeight)
      el.scrollTop = (row + 1) * CELL - el.clientHeight;
  }, [sel.focus]);

  const bulk = async (action: BulkAction, className: string | null = null) => {
    const chosen = items.filter((i) => sel.ids.has(i.object_id));
    if (chosen.length === 0 || busy) return;
    if (chosen.length > BULK_MAX) {
      setError(`At most ${BULK_MAX} objects can be reviewed at once; ${chosen.length} are selected.`);
      return;
    }
    setBusy(true);
    setError(null);
    setConflicts([]);
    try {
      const res = await api.post<{
        count: number;
        objects: Array<{ id: string; state: string; class_name: string; version: number }>;
      }>('/api/objects/bulk-review', {
        object_ids: chosen.map((i) => i.object_id),
        action,
        class_name: className,
        expected_versions: Object.fromEntries(chosen.map((i) => [i.object_id, i.version])),
        reviewer: session.user.name ?? session.user.email,
      });
      const after = new Map(res.objects.map((o) => [o.id, o]));
      setItems((prev) => prev.map((i) => ({ ...i, ...pickObject(after.get(i.object_id)) })));
      setUndo((u) => [
        ...u,
        {
          action,
          className,
          objects: chosen.map((i) => ({
            id: i.object_id,
            state: i.state,
            class_name: i.class_name,
            after: after.get(i.object_id)!.version,
          })),
        },
      ]);
      setNotice(`${res.count} ${res.count === 1 ? 'object' : 'objects'} ${pastTense(action, className)}.`);
      setSel((s) => ({ ...s, ids: new Set() }));
    } catch (err) {
      if (err instanceof ApiError && err.status === 409 && Array.isArray(err.body.conflicts)) {
        setConflicts(err.body.conflicts as Conflict[]);
        setError(`${err.readable}. Reload them to see the other versions, then decide again.`);
      } else setError(readableError(err));
    } finally {
      setBusy(false);
    }
  };

  /** Undoes the last bulk decision as a whole: one bulk edit per state the objects had before. */
  const undo = async () => {
    const last = undoStack.at(-1);
    if (!last || busy) return;
    setBusy(true);
    setError(null);
    try {
      const groups = new Map<string, BulkDecision['objects']>();
      for (const o of last.objects)
        groups.set(`${o.state}|${o.class_name}`, [...(groups.get(`${o.state}|${o.class_name}`) ?? []), o]);
      for (const group of groups.values()) {
        const res = await api.post<{
          objects: Array<{ id: string; state: string; class_name: string; version: number }>;
        }>('/api/objects/bulk-review', {
          object_ids: group.map((o) => o.id),
          action: 'edit',
          state: group[0]!.state,
          class_name: group[0]!.class_name,
          expected_versions: Object.fromEntries(group.map((o) => [o.id, o.after])),
          reviewer: session.user.name ?? session.user.email,
        });
        const after = new Map(res.objects.map((o) => [o.id, o]));
        setItems((prev) => prev.map((i) => ({ ...i, ...pickObject(after.get(i.object_id)) })));
      }
      setUndo((u) => u.slice(0, -1));
      setNotice(`Undone: ${last.objects.length} objects are back as they were.`);
    } catch (err) {
      setError(readableError(err));
    } finally {
      setBusy(false);
    }
  };

  /** Reads the conflicting objects again, so the next decision carries their current versions. */
  const reloadConflicts = async () => {
    try {
      const fresh = await Promise.all(
        conflicts.map((c) =>
          api.get<{ id: string; state: string; class_name: string; version: number }>(
            `/api/objects/${c.object_id}`,
          ),
        ),
      );
      const byId = new Map(fresh.map((o) => [o.id, o]));
      setItems((prev) => prev.map((i) => ({ ...i, ...pickObject(byId.get(i.object_id)) })));
      setConflicts([]);
      setError(null);
      // The button that asked is gone: the keys go back to the grid.
      scroller.current?.focus();
    } catch (err) {
      setError(readableError(err));
    }
  };

  const onKey = (e: KeyboardEvent) => {
    if (picking) return;
    const k = e.key.length === 1 ? e.key.toLowerCase() : e.key;
    const mod = e.ctrlKey || e.metaKey;
    const step: Record<string, number> = {
      ArrowRight: 1,
      ArrowLeft: -1,
      ArrowDown: columns,
      ArrowUp: -columns,
    };
    if (step[k] !== undefined) setSel((s) => moveFocus(s, order, step[k]!, e.shiftKey));
    else if (k === ' ') setSel((s) => toggleFocused(s, order));
    else if (mod && k === 'a') setSel((s) => selectVisible(s, order, firstVisible, lastVisible));
    else if (mod && k === 'z') void undo();
    else if (k === 'Escape') setSel((s) => ({ ...s, ids: new Set() }));
    else if (!mod && k === 'a') void bulk('accept');
    else if (!mod && k === 'r') void bulk('reject');
    else if (!mod && k === 'c' && sel.ids.size) setPicking(true);
    else return;
    e.preventDefault();
  };

  if (!filters.class_name)
    return (
      <main class="page">
        <h1>Crop grid</h1>
        <p>Choose the class to review as crops.</p>
        <ClassPicker
          classes={classes}
          onCancel={() => navigate('/queue')}
          onPick={(name) => navigate(withQuery('/grid', { ...filters, class_name: name }))}
        />
      </main>
    );

  const sheetUrls = new Map<number, string | null>();
  const sheetUrl = (sheet: number) => {
    if (!sheetUrls.has(sheet)) sheetUrls.set(sheet, sheets.url(sheet, sheetIds(sheet)));
    return sheetUrls.get(sheet)!;
  };
  const cells = [];
  for (let row = firstRow; row <= lastRow; row++) {
    for (let col = 0; col < columns; col++) {
      const index = row * columns + col;
      const item = items[index];
      if (!item) break;
      const selected = sel.ids.has(item.object_id);
      cells.push(
        <div
          key={item.object_id}
          class={`crop${selected ? ' selected' : ''}${index === sel.focus ? ' focused' : ''}`}
          style={{ top: row * CELL, left: col * CELL }}
          data-object-id={item.object_id}
          aria-selected={selected}
          role="gridcell"
          onClick={(e) =>
            setSel((s) => click(s, order, index, { toggle: e.ctrlKey || e.metaKey, extend: e.shiftKey }))
          }
        >
          <CropImage
            url={sheetUrl(sheetPlace(index).sheet)}
            index={index}
            label={`${item.class_name} ${item.object_id.slice(0, 8)}`}
          />
          <span class={`state state-${item.state}`}>{item.state}</span>
          <span class="conf">{item.conf === null ? '—' : item.conf.toFixed(2)}</span>
        </div>,
      );
    }
  }

  return (
    <main class="grid-page">
      <div class="grid-bar">
        <h1>
          {filters.class_name} <span class="muted">· {filters.state.replaceAll(',', ', ')}</span>
        </h1>
        <span class="count" data-testid="selection">
          {sel.ids.size} of {items.length}
          {cursor ? '+' : ''} selected
        </span>
        <button type="button" disabled={!sel.ids.size || busy} onClick={() => void bulk('accept')}>
          Accept (A)
        </button>
        <button
          type="button"
          class="danger"
          disabled={!sel.ids.size || busy}
          onClick={() => void bulk('reject')}
        >
          Reject (R)
        </button>
        <button type="button" class="quiet" disabled={!sel.ids.size || busy} onClick={() => setPicking(true)}>
          Relabel (C)
        </button>
        <button type="button" class="quiet" disabled={!undoStack.length || busy} onClick={() => void undo()}>
          Undo (Ctrl+Z)
        </button>
      </div>
      <Problem
        message={error}
        onRetry={conflicts.length ? () => void reloadConflicts() : undefined}
        retryLabel="Reload them"
      />
      {conflicts.length > 0 && (
        <ul class="conflicts" aria-label="Conflicting objects">
          {conflicts.map((c) => (
            <li key={c.object_id}>
              <code>{c.object_id.slice(0, 8)}</code> you saw version {c.expected}, it is now {c.actual}
            </li>
          ))}
        </ul>
      )}
      {notice && !error && (
        <div class="fresh" role="status">
          {notice}
        </div>
      )}
      <div
        ref={scroller}
        class="grid-scroller"
        tabIndex={0}
        role="grid"
        aria-label="Crops"
        aria-multiselectable="true"
        onKeyDown={onKey}
        onScroll={(e) => setBox((b) => ({ ...b, top: e.currentTarget.scrollTop }))}
      >
        <div class="grid-inner" style={{ height: rows * CELL }}>
          {cells}
        </div>
        {!loading && items.length === 0 && (
          <p class="muted empty">No {filters.class_name} waits with these filters.</p>
        )}
      </div>
      {picking && (
        <ClassPicker
          classes={classes}
          onCancel={() => setPicking(false)}
          onPick={(name) => {
            setPicking(false);
            void bulk('relabel', name);
          }}
        />
      )}
    </main>
  );
}

const pickObject = (o: { state: string; class_name: string; version: number } | undefined) =>
  o ? { state: o.state, class_name: o.class_name, version: o.version } : {};

const pastTense = (action: BulkAction, className: string | null) =>
  action === 'accept' ? 'accepted' : action === 'reject' ? 'rejected' : `relabelled as ${className}`;

/** One crop: its cell of the sheet it came in (grey until the sheet has arrived). */
function CropImage({ url, index, label }: { url: string | null; index: number; label: string }) {
  const { col, row } = sheetPlace(index);
  return (
    <div
      class="crop-image"
      role="img"
      aria-label={label}
      data-ready={url ? 'true' : undefined}
      style={
        url
          ? {
              backgroundImage: `url(${url})`,
              backgroundPosition: `-${col * CROP}px -${row * CROP}px`,
              backgroundSize: `${SHEET_COLS * CROP}px auto`,
            }
          : undefined
      }
    />
  );
}
