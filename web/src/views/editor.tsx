import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { ApiError, OfflineError, readableError, roleAtLeast } from '../api';
import { CheckpointsPanel } from '../components/checkpoints';
import { ClassPicker, type OntologyClass } from '../components/class-picker';
import { Filmstrip, type StripFrame } from '../components/filmstrip';
import { ObjectPanel, type EditorObject } from '../components/object-panel';
import { ConflictDialog, type ConflictFacts } from '../components/conflict-dialog';
import { KeyHelp } from '../components/key-help';
import { Problem } from '../components/problem';
import { useApp } from '../context';
import { EDITOR_KEYS, editorCommandOf, type EditorCommand } from '../lib/editor-keys';
import { loadImage, MediaUrls } from '../lib/media';
import { FramePainter, zoomOnWheel, type Box, type Draft, type Handles, type View } from '../lib/painter';
import {
  boxCorners,
  drag,
  drawnBox,
  enclosing,
  handleAt,
  insertVertex,
  keypointBox,
  kindOf,
  pickAt,
  removeVertex,
  ringPoints,
  rotateBy,
  rotationHandle,
  roundTenth,
  translate,
  type Handle,
  type Point,
  type Shape,
} from '../lib/shapes';
import { useKeydown } from '../lib/use-keydown';
import { OBJECT_STATES } from '../lib/queue';
import { navigate, useLocation, withQuery } from '../router';

interface FrameMeta {
  id: string;
  width: number;
  height: number;
  index: number;
  session_id: string;
}

/** An object as GET /api/frames/{id}/objects answers it (masks by reference). */
type ObjectRow = Omit<EditorObject, 'mask'> & { mask_polygons?: number[][] | null };

type Tool = 'select' | Draft['kind'];

/** A pointer gesture in progress on the canvas. */
type Gesture =
  | { kind: 'pan'; last: [number, number] }
  | { kind: 'shape'; id: string; handle: Handle; from: Point; start: Shape; latest: Shape | null }
  | { kind: 'box'; from: Point };

/** Mask polygons are read from the object store one object at a time; this many at once. */
const MASK_READS = 8;
/** Handles are grabbed within this many screen pixels. */
const GRAB_PX = 7;
const TOOL_NAMES: Record<Tool, string> = {
  select: 'Select',
  box: 'Box',
  polygon: 'Polygon',
  polyline: 'Polyline',
  keypoints: 'Keypoints',
};

/** The view as the URL holds it: `scale,x,y` (frame pixels at the canvas's top left). */
const viewParam = (v: View) => [v.scale.toFixed(4), v.x.toFixed(1), v.y.toFixed(1)].join(',');
function parseView(text: string | null): View | null {
  const parts = text?.split(',').map(Number);
  if (!parts || parts.length !== 3 || parts.some((n) => !Number.isFinite(n)) || parts[0]! <= 0) return null;
  return { scale: parts[0]!, x: parts[1]!, y: parts[2]! };
}

/** How often a write that got no answer is tried again (and at once when the browser is back online). */
const RETRY_MS = 2000;

const untilOnline = () =>
  new Promise<void>((resolve) => {
    const done = () => {
      window.clearTimeout(timer);
      window.removeEventListener('online', done);
      resolve();
    };
    const timer = window.setTimeout(done, RETRY_MS);
    window.addEventListener('online', done);
  });

/** Whether two versions of an object hold the same geometry, as an edit sends it. */
const sameGeometry = (a: Shape, b: Shape) =>
  kindOf(a) === kindOf(b) && JSON.stringify(geometryBody(a)) === JSON.stringify(geometryBody(b));

/** What an object's geometry edit sends: the shapes of its own kind (docs/web.md, Frame editor). */
function geometryBody(s: Shape): Record<string, unknown> {
  switch (kindOf(s)) {
    case 'box':
      return { bbox: drawnBox(s).map(roundTenth), rot_deg: s.rot_deg };
    case 'polyline':
      return { polyline: s.polyline!.map((r) => r.map(roundTenth)), bbox: padded(enclosing(s.polyline!)) };
    case 'keypoints':
      return { keypoints: roundKeypoints(s.keypoints!), bbox: keypointBox(s.keypoints!) };
    case 'polygon':
      return { polygons: s.mask!.map((r) => r.map(roundTenth)) };
  }
}

const roundKeypoints = (k: Record<string, number[]>) =>
  Object.fromEntries(Object.entries(k).map(([n, v]) => [n, v.map(roundTenth)]));

/** A line's box grown by 2 px, so a straight horizontal or vertical line still has an area. */
const padded = ([x1, y1, x2, y2]: Box): Box => [x1 - 2, y1 - 2, x2 + 2, y2 + 2];

/**
 * The frame editor: one canvas with every object of a frame drawn (boxes with their rotation,
 * mask polygons, polylines, keypoints), zoom and pan, shapes edited and created with the mouse,
 * classes chosen by typing, and a panel with the object's provenance, attributes and history,
 * the frame's checkpoints and layers. Every write carries the object's version; a 409 shows both
 * versions and lets the person choose (nothing is overwritten silently).
 */
export function EditorView() {
  const { api, session } = useApp();
  const { query } = useLocation();
  const frameId = query.get('frame') ?? '';
  const reviewer = roleAtLeast(session.user.role, 'reviewer');
  const who = session.user.name ?? session.user.email;
  const media = useMemo(() => new MediaUrls(api), [api]);

  const [frame, setFrame] = useState<FrameMeta | null>(null);
  const [objects, setObjects] = useState<EditorObject[]>([]);
  const [selected, setSelected] = useState<string | null>(query.get('object'));
  const [activeHandle, setActiveHandle] = useState<Handle | null>(null);
  const [tool, setTool, toolRef] = useLatestState<Tool>('select');
  const [draft, setDraft, draftRef] = useLatestState<Draft | null>(null);
  const [picking, setPicking] = useState<
    null | { for: 'relabel' } | { for: 'create'; body: Record<string, unknown> }
  >(null);
  const [confirmDelete, setConfirmDelete] = useState(false);
  const [hiddenClasses, setHiddenClasses] = useState<Set<string>>(new Set());
  const [hiddenStates, setHiddenStates] = useState<Set<string>>(new Set());
  const [original, setOriginal] = useState(false);
  const [classes, setClasses] = useState<OntologyClass[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [help, setHelp] = useState(false);
  const [revision, setRevision] = useState(0);
  const [conflict, setConflict] = useState<{ mine: EditorObject; theirs: EditorObject } | null>(null);
  const [strip, setStrip] = useState<StripFrame[]>([]);
  const [waiting, setWaiting] = useState(0);

  const canvas = useRef<HTMLCanvasElement>(null);
  const painter = useRef<FramePainter | null>(null);
  const objectsRef = useRef<EditorObject[]>([]);
  objectsRef.current = objects;
  const gesture = useRef<Gesture | null>(null);
  /** Writes of one object go one after another, each with the version the last one left. */
  const writes = useRef<Promise<unknown>>(Promise.resolve());
  const viewTimer = useRef(0);

  const selectedObject = objects.find((o) => o.id === selected) ?? null;
  const visible = (o: EditorObject) => !hiddenClasses.has(o.class_name) && !hiddenStates.has(o.state);

  // The frame: its facts, its objects with their mask polygons, and its image.
  useEffect(() => {
    if (!frameId) return;
    let stale = false;
    setError(null);
    setSelected(query.get('object'));
    setActiveHandle(null);
    setDraft(null);
    (async () => {
      const [meta, rows] = await Promise.all([
        api.get<FrameMeta>(`/api/frames/${frameId}`),
        api.get<{ items: ObjectRow[] }>(`/api/frames/${frameId}/objects`),
      ]);
      const loaded = await withMasks(rows.items);
      if (stale) return;
      setFrame(meta);
      setObjects(loaded);
      const p = painter.current;
      if (!p) return;
      p.setFrame(null, meta.width, meta.height);
      const view = parseView(query.get('view'));
      const target = loaded.find((o) => o.id === query.get('object'));
      if (view) p.setView(view);
      else if (target) p.fitBox(target.bbox, 3);
      else p.fitFrame();
    })().catch((err: unknown) => !stale && setError(readableError(err)));
    return () => {
      stale = true;
    };
  }, [frameId]);

  useEffect(() => {
    if (!frame) return;
    let stale = false;
    media
      .frameImage(frame.id, original ? 'original' : 'redacted')
      .then((url) => loadImage(url))
      .then((img) => !stale && painter.current?.setFrame(img, frame.width, frame.height))
      .catch((err: unknown) => !stale && setError(readableError(err)));
    return () => {
      stale = true;
    };
  }, [frame?.id, original]);

  useEffect(() => {
    api
      .get<{ classes: OntologyClass[] }>('/api/ontology')
      .then((o) => setClasses(o.classes))
      .catch((err: unknown) => setError(readableError(err)));
  }, []);

  /** Reads the mask polygons of the objects that have one, a few at a time. */
  async function withMasks(rows: ObjectRow[]): Promise<EditorObject[]> {
    const out = rows.map((r) => ({ ...r, mask: r.mask_polygons ?? null }) as EditorObject);
    const todo = out.filter((o) => o.mask_uri && !o.mask);
    for (let i = 0; i < todo.length; i += MASK_READS)
      await Promise.all(
        todo.slice(i, i + MASK_READS).map(async (o) => {
          o.mask = (await api.get<ObjectRow>(`/api/objects/${o.id}`)).mask_polygons ?? null;
        }),
      );
    return out;
  }

  const readObject = async (id: string): Promise<EditorObject> => {
    const [o] = await withMasks([await api.get<ObjectRow>(`/api/objects/${id}`)]);
    return o!;
  };

  // The painter follows the objects, the selection, the layers, the draft and the handles.
  useEffect(() => {
    if (!canvas.current) return;
    const p = new FramePainter(canvas.current);
    p.onPainted = () => {
      const c = canvas.current;
      if (!c) return;
      // Tests and people read which object is shown once it is really on the canvas.
      const shown = p.selectedId && objectsRef.current.some((o) => o.id === p.selectedId);
      c.dataset.painted = shown ? p.selectedId! : '';
      c.dataset.view = viewParam(p.view);
      // The URL keeps the view, so a link opens the same zoom (written once the view settles).
      window.clearTimeout(viewTimer.current);
      viewTimer.current = window.setTimeout(() => {
        const q = new URLSearchParams(window.location.search);
        if (q.get('view') === viewParam(p.view)) return;
        q.set('view', viewParam(p.view));
        window.history.replaceState(null, '', `${window.location.pathname}?${q}`);
      }, 250);
    };
    painter.current = p;
    p.resize();
    const observer = new ResizeObserver(() => p.resize());
    observer.observe(canvas.current);
    return () => observer.disconnect();
  }, []);

  useEffect(() => {
    const p = painter.current;
    if (!p) return;
    p.setObjects(objects, selected);
    p.setHidden((o) => hiddenClasses.has(o.class_name) || hiddenStates.has(o.state));
    const o = selectedObject && visible(selectedObject) ? selectedObject : null;
    p.setHandles(o ? (scale) => handlesOf(o, activeHandle, reach(scale)) : null);
    p.setDraft(draft);
  }, [objects, selected, hiddenClasses, hiddenStates, draft, activeHandle]);

  // The URL names the frame and the selected object.
  useEffect(() => {
    const q = new URLSearchParams(window.location.search);
    if (selected) q.set('object', selected);
    else q.delete('object');
    window.history.replaceState(null, '', `${window.location.pathname}?${q}`);
  }, [selected]);

  const replaceObject = (o: EditorObject) => {
    // Writes queued behind this one read the version from the ref before the next render.
    objectsRef.current = objectsRef.current.map((x) => (x.id === o.id ? o : x));
    setObjects((list) => list.map((x) => (x.id === o.id ? o : x)));
  };

  /** Runs one write after the ones before it; a 409 opens the side-by-side view. */
  const write = (objectId: string, mine: EditorObject | null, work: () => Promise<void>) => {
    const next = writes.current.then(async () => {
      setError(null);
      let kept = false;
      try {
        for (;;) {
          try {
            await work();
            setRevision((r) => r + 1);
            return;
          } catch (err) {
            // No answer at all: the write waits, in order, for the connection to come back.
            if (!(err instanceof OfflineError)) throw err;
            if (!kept) setWaiting((w) => w + 1);
            kept = true;
            await untilOnline();
          }
        }
      } catch (err) {
        if (err instanceof ApiError && err.status === 409 && mine) {
          const theirs = await readObject(objectId);
          // A retry whose first attempt landed (its answer lost with the connection) finds its own shape.
          if (kept && sameGeometry(theirs, mine)) replaceObject(theirs);
          else setConflict({ mine, theirs });
          return;
        }
        setError(readableError(err));
        // What is drawn goes back to what the store holds.
        const fresh = await readObject(objectId).catch(() => null);
        if (fresh) replaceObject(fresh);
      } finally {
        if (kept) setWaiting((w) => w - 1);
      }
    });
    writes.current = next;
    return next;
  };

  /** Sends an object's new geometry against the version the last write left. */
  const saveGeometry = (objectId: string, shape: Shape) => {
    const mine = objectsRef.current.find((o) => o.id === objectId);
    if (!mine) return;
    const wanted = { ...mine, ...shape };
    void write(objectId, wanted, async () => {
      const version = objectsRef.current.find((o) => o.id === objectId)?.version ?? mine.version;
      await sendGeometry(objectId, wanted, version);
    });
  };

  const sendGeometry = async (objectId: string, shape: Shape, version: number) => {
    const body = geometryBody(shape);
    if (kindOf(shape) === 'polygon')
      await api.request(`/api/objects/${objectId}/mask`, {
        method: 'PUT',
        body: { ...body, expected_version: version },
      });
    else
      await api.post(`/api/objects/${objectId}/review`, {
        action: 'edit',
        reviewer: who,
        expected_version: version,
        ...body,
      });
    replaceObject(await readObject(objectId));
  };

  /** A review (class, state, attributes) of the selected object, against its version; settles once written. */
  const review = async (body: Record<string, unknown>): Promise<void> => {
    const o = selectedObject;
    if (!o) return;
    await write(o.id, null, async () => {
      const version = objectsRef.current.find((x) => x.id === o.id)?.version ?? o.version;
      await api.post(`/api/objects/${o.id}/review`, { reviewer: who, expected_version: version, ...body });
      replaceObject(await readObject(o.id));
    });
  };

  const create = (body: Record<string, unknown>) => {
    // One key for every attempt: a create sent again after a lost answer makes no second object.
    const idemKey = crypto.randomUUID();
    void write('', null, async () => {
      const made = await api.post<{ id: string; state: string; clipped: boolean }>(
        `/api/frames/${frameId}/objects`,
        { ...body, idem_key: idemKey },
      );
      const o = await readObject(made.id);
      setObjects((list) => [...list, o]);
      setSelected(o.id);
      setNotice(
        `Created a ${kindOf(o)} of class ${o.class_name} (${made.state})${made.clipped ? ', clipped to the frame' : ''}.`,
      );
    });
  };

  const remove = () => {
    const o = selectedObject;
    setConfirmDelete(false);
    if (!o) return;
    void write(o.id, null, async () => {
      // Gone already (a first attempt whose answer was lost) is what was asked.
      await api.request(`/api/objects/${o.id}`, { method: 'DELETE' }).catch((err: unknown) => {
        if (!(err instanceof ApiError && err.status === 404)) throw err;
      });
      setObjects((list) => list.filter((x) => x.id !== o.id));
      setSelected(null);
      setNotice(`Deleted the ${o.class_name}.`);
    });
  };

  const reload = async (message: string) => {
    const rows = await api.get<{ items: ObjectRow[] }>(`/api/frames/${frameId}/objects`);
    setObjects(await withMasks(rows.items));
    setRevision((r) => r + 1);
    setNotice(message);
  };

  /** The two ways out of a geometry conflict, one key each. */
  const resolve = (how: 'mine' | 'theirs') => {
    if (!conflict) return;
    const { mine, theirs } = conflict;
    setConflict(null);
    replaceObject(theirs);
    if (how === 'mine') void write(mine.id, mine, () => sendGeometry(mine.id, mine, theirs.version));
  };

  // ---- the pointer on the canvas ----

  const framePoint = (e: PointerEvent | MouseEvent): Point => {
    const r = canvas.current!.getBoundingClientRect();
    const ratio = window.devicePixelRatio || 1;
    return painter.current!.toFrame((e.clientX - r.left) * ratio, (e.clientY - r.top) * ratio);
  };
  const tolerance = () => reach(painter.current?.view.scale ?? 1);

  const onPointerDown = (e: PointerEvent) => {
    if (e.button !== 0 || !painter.current) return;
    (e.currentTarget as HTMLElement).setPointerCapture(e.pointerId);
    const p = framePoint(e);
    const tool = toolRef.current;
    if (tool === 'box') {
      gesture.current = { kind: 'box', from: p };
      setDraft({ kind: 'box', points: [p], pointer: p });
      return;
    }
    if (tool !== 'select') {
      const d = draftRef.current;
      setDraft({ kind: tool, points: [...(d?.kind === tool ? d.points : []), p], pointer: p });
      return;
    }
    const tol = tolerance();
    const current = selectedObject && visible(selectedObject) ? selectedObject : null;
    const handle = current ? handleAt(current, p, tol) : null;
    if (current && handle) {
      if (e.altKey && handle.kind === 'vertex') {
        const next = removeVertex(current, handle.part, handle.ring, handle.index);
        if (next) {
          replaceObject({ ...current, ...next });
          saveGeometry(current.id, next);
        } else
          setError(
            `A ${handle.part === 'mask' ? 'polygon keeps three' : 'polyline keeps two'} points at least.`,
          );
        return;
      }
      setActiveHandle(handle.kind === 'vertex' || handle.kind === 'keypoint' ? handle : null);
      gesture.current = { kind: 'shape', id: current.id, handle, from: p, start: current, latest: null };
      return;
    }
    const hit = pickAt(objects.filter(visible), p, tol);
    setActiveHandle(null);
    if (hit) {
      setSelected(hit.id);
      gesture.current = {
        kind: 'shape',
        id: hit.id,
        handle: { kind: 'body' },
        from: p,
        start: hit,
        latest: null,
      };
    } else {
      setSelected(null);
      gesture.current = { kind: 'pan', last: [e.clientX, e.clientY] };
    }
  };

  const onPointerMove = (e: PointerEvent) => {
    const g = gesture.current;
    const p = painter.current;
    if (!p) return;
    if (!g) {
      const d = draftRef.current;
      if (d && d.kind !== 'box') setDraft({ ...d, pointer: framePoint(e) });
      return;
    }
    if (g.kind === 'pan') {
      const ratio = window.devicePixelRatio || 1;
      p.panBy((e.clientX - g.last[0]) * ratio, (e.clientY - g.last[1]) * ratio);
      g.last = [e.clientX, e.clientY];
    } else if (g.kind === 'box') {
      setDraft({ kind: 'box', points: [g.from], pointer: framePoint(e) });
    } else {
      const to = framePoint(e);
      // A click that wobbles a pixel is a click, not a move.
      if (!g.latest && Math.hypot(to[0] - g.from[0], to[1] - g.from[1]) * p.view.scale <= 2) return;
      const next = drag(g.start, g.handle, g.from, to);
      g.latest = next;
      setObjects((list) => list.map((o) => (o.id === g.id ? { ...o, ...next } : o)));
    }
  };

  const onPointerUp = (e: PointerEvent) => {
    const g = gesture.current;
    gesture.current = null;
    if (!g) return;
    if (g.kind === 'box') {
      const to = framePoint(e);
      setDraft(null);
      const box: Box = [
        Math.min(g.from[0], to[0]),
        Math.min(g.from[1], to[1]),
        Math.max(g.from[0], to[0]),
        Math.max(g.from[1], to[1]),
      ];
      if (
        (box[2] - box[0]) * painter.current!.view.scale < 3 ||
        (box[3] - box[1]) * painter.current!.view.scale < 3
      )
        return;
      setPicking({ for: 'create', body: { bbox: box.map(roundTenth) } });
    } else if (g.kind === 'shape' && g.latest) {
      saveGeometry(g.id, g.latest);
    }
  };

  const onDoubleClick = (e: MouseEvent) => {
    if (toolRef.current !== 'select') return finishDraft();
    const o = selectedObject;
    if (!o) return;
    const h = handleAt(o, framePoint(e), tolerance());
    if (h?.kind !== 'edge') return;
    const next = insertVertex(o, h.part, h.ring, h.index, h.at);
    replaceObject({ ...o, ...next });
    saveGeometry(o.id, next);
    setActiveHandle({ kind: 'vertex', part: h.part, ring: h.ring, index: h.index + 1 });
  };

  /** Ends the shape being drawn and asks for its class. */
  const finishDraft = () => {
    const d = draftRef.current;
    if (!d) return;
    const pts = d.points;
    const least = d.kind === 'polygon' ? 3 : d.kind === 'polyline' ? 2 : 1;
    if (pts.length < least) {
      setError(
        `A ${d.kind} needs ${least} point${least > 1 ? 's' : ''} at least; keep clicking, or Esc to drop it.`,
      );
      return;
    }
    // A double-click that ends a shape also clicked twice where it ended.
    const distinct = pts.filter(
      (p, i) => i === 0 || Math.hypot(p[0] - pts[i - 1]![0], p[1] - pts[i - 1]![1]) > 0.5,
    );
    const flat = distinct.flatMap(([x, y]) => [roundTenth(x), roundTenth(y)]);
    setDraft(null);
    if (distinct.length < least) {
      setError(`A ${d.kind} needs ${least} distinct points at least.`);
      return;
    }
    if (d.kind === 'polygon')
      setPicking({ for: 'create', body: { bbox: enclosing([flat]), mask_polygons: [flat] } });
    else if (d.kind === 'polyline')
      setPicking({ for: 'create', body: { bbox: padded(enclosing([flat])), polyline: [flat] } });
    else {
      const keypoints = Object.fromEntries(
        distinct.map(([x, y], i) => [`p${i + 1}`, [roundTenth(x), roundTenth(y), 2]]),
      );
      setPicking({ for: 'create', body: { bbox: keypointBox(keypoints), keypoints } });
    }
  };

  // ---- the keyboard ----

  const visibleObjects = objects.filter(visible);
  const selectBy = (by: 1 | -1) => {
    if (!visibleObjects.length) return;
    const i = visibleObjects.findIndex((o) => o.id === selected);
    const next = visibleObjects[(i + by + visibleObjects.length) % visibleObjects.length]!;
    setSelected(next.id);
    setActiveHandle(null);
  };

  const openFrame = (by: 1 | -1) => {
    const i = strip.findIndex((f) => f.current);
    const target = strip[i + by];
    if (target) navigate(withQuery('/editor', { frame: target.id }));
  };

  const move = (dx: number, dy: number) => {
    const o = selectedObject;
    if (!o) return;
    const next = translate(o, dx, dy);
    replaceObject({ ...o, ...next });
    saveGeometry(o.id, next);
  };

  const turn = (deg: number) => {
    const o = selectedObject;
    if (!o || kindOf(o) !== 'box') return;
    const next = rotateBy(o, deg);
    replaceObject({ ...o, ...next });
    saveGeometry(o.id, next);
  };

  const removeChosen = () => {
    const d = draftRef.current;
    if (d) return setDraft({ ...d, points: d.points.slice(0, -1) });
    const o = selectedObject;
    if (!o) return;
    const h = activeHandle;
    if (h?.kind === 'vertex') {
      const next = removeVertex(o, h.part, h.ring, h.index);
      if (!next)
        return setError(
          `A ${h.part === 'mask' ? 'polygon keeps three' : 'polyline keeps two'} points at least.`,
        );
      setActiveHandle(null);
      replaceObject({ ...o, ...next });
      return saveGeometry(o.id, next);
    }
    if (h?.kind === 'keypoint') {
      const rest = Object.fromEntries(Object.entries(o.keypoints!).filter(([n]) => n !== h.name));
      if (!Object.keys(rest).length) return setError('The last keypoint stays; delete the object instead.');
      const next = { ...o, keypoints: rest, bbox: keypointBox(rest) };
      setActiveHandle(null);
      replaceObject(next);
      return saveGeometry(o.id, next);
    }
    if (reviewer) setConfirmDelete(true);
    else setError('Deleting an object needs a reviewer.');
  };

  const run = (command: EditorCommand, shift: boolean) => {
    const step = shift ? 10 : 1;
    const actions: Record<EditorCommand, () => unknown> = {
      selectTool: () => (setTool('select'), setDraft(null)),
      boxTool: () => (setTool('box'), setDraft(null)),
      polygonTool: () => (setTool('polygon'), setDraft(null)),
      polylineTool: () => (setTool('polyline'), setDraft(null)),
      keypointTool: () => (setTool('keypoints'), setDraft(null)),
      finish: finishDraft,
      cancel: () => {
        if (draftRef.current) setDraft(null);
        else if (help) setHelp(false);
        else {
          setSelected(null);
          setActiveHandle(null);
        }
      },
      next: () => selectBy(1),
      previous: () => selectBy(-1),
      relabel: () => selectedObject && setPicking({ for: 'relabel' }),
      accept: () => reviewer && review({ action: 'accept' }),
      reject: () => reviewer && review({ action: 'reject' }),
      remove: removeChosen,
      rotateLeft: () => turn(shift ? -1 : -5),
      rotateRight: () => turn(shift ? 1 : 5),
      nudgeLeft: () => move(-step, 0),
      nudgeRight: () => move(step, 0),
      nudgeUp: () => move(0, -step),
      nudgeDown: () => move(0, step),
      nextFrame: () => openFrame(1),
      previousFrame: () => openFrame(-1),
      fitFrame: () => painter.current?.fitFrame(),
      actualSize: () => painter.current?.actualSize(),
      fitObject: () => selectedObject && painter.current?.fitBox(selectedObject.bbox, 3),
      toggleOriginal: () => reviewer && setOriginal((v) => !v),
      hideClass: () => {
        if (!selectedObject) return;
        setHiddenClasses((s) => new Set([...s, selectedObject.class_name]));
        setSelected(null);
      },
      help: () => setHelp((h) => !h),
    };
    void actions[command]();
  };

  useKeydown((e) => {
    if (picking) return;
    const target = e.target as HTMLElement | null;
    if (
      target &&
      (target.tagName === 'INPUT' || target.tagName === 'TEXTAREA' || target.tagName === 'SELECT')
    )
      return;
    if (conflict) {
      const how = ({ '1': 'mine', '2': 'theirs' } as const)[e.key as '1' | '2'];
      if (how) resolve(how);
      else if (e.key === 'Escape') setConflict(null);
      else return;
      e.preventDefault();
      return;
    }
    if (confirmDelete) {
      if (e.key === 'Enter') remove();
      else if (e.key === 'Escape') setConfirmDelete(false);
      else return;
      e.preventDefault();
      return;
    }
    const command = editorCommandOf(e);
    if (!command) return;
    e.preventDefault();
    run(command, e.shiftKey);
  });

  if (!frameId)
    return (
      <main class="page">
        <h1>Frame editor</h1>
        <p>
          Open a frame from the <a href="/queue">review queue</a> (each row links to its frame), or from the
          keyboard review with <kbd>E</kbd>.
        </p>
      </main>
    );

  const classesOnFrame = [...new Set(objects.map((o) => o.class_name))].sort();
  return (
    <main class="editor">
      <section class="stage">
        <div class="toolbar" role="toolbar" aria-label="Tools">
          {(Object.keys(TOOL_NAMES) as Tool[]).map((t) => (
            <button
              type="button"
              key={t}
              class={tool === t ? 'tool on' : 'tool'}
              aria-pressed={tool === t}
              onClick={() => (setTool(t), setDraft(null))}
            >
              {TOOL_NAMES[t]}
            </button>
          ))}
          <span class="muted tool-hint" data-testid="tool-hint">
            {tool === 'select'
              ? 'Drag a shape, a corner, a vertex or a keypoint; double-click an edge to add a vertex, Alt+click a vertex to remove it.'
              : tool === 'box'
                ? 'Drag to draw a box.'
                : `Click to add points; Enter ${tool === 'polygon' ? 'closes the polygon' : 'ends'}; Delete drops the last point.`}
          </span>
          {reviewer && (
            <button
              type="button"
              class="quiet"
              aria-pressed={original}
              onClick={() => setOriginal((v) => !v)}
            >
              {original ? 'Showing the original' : 'Showing the redacted image'}
            </button>
          )}
        </div>
        <canvas
          ref={canvas}
          class={`frame-canvas tool-${tool}`}
          aria-label="Frame"
          tabIndex={0}
          data-loaded={frame?.id}
          data-testid="editor-canvas"
          onPointerDown={onPointerDown}
          onPointerMove={onPointerMove}
          onPointerUp={onPointerUp}
          onDblClick={onDoubleClick}
          onWheel={(e) => zoomOnWheel(painter.current, e)}
        />
        <Filmstrip
          api={api}
          media={media}
          frameId={frameId}
          revision={revision}
          onFrames={setStrip}
          onOpen={(id) => navigate(withQuery('/editor', { frame: id }))}
        />
      </section>
      <aside class="panel" aria-label="Frame and object">
        {frame && (
          <p class="frame-title">
            Frame #{frame.index} · {objects.length} objects ·{' '}
            <a href={withQuery('/queue', { session_id: frame.session_id })}>session queue</a>
          </p>
        )}
        <Problem message={error} />
        {waiting > 0 && (
          <div class="offline" role="status">
            Offline: {waiting} {waiting === 1 ? 'change waits' : 'changes wait'} to be sent. They go, in
            order, as soon as the connection is back.
          </div>
        )}
        {notice && (
          <p class="notice" role="status">
            {notice}
          </p>
        )}
        {selectedObject ? (
          <ObjectPanel
            api={api}
            object={selectedObject}
            revision={revision}
            onSaveAttrs={(attrs) => review({ action: 'edit', attrs })}
          />
        ) : (
          <p class="muted">Click an object (or press Tab) to see and edit it.</p>
        )}
        <details open>
          <summary>Layers</summary>
          <LayerToggles
            legend="Classes"
            values={classesOnFrame}
            hidden={hiddenClasses}
            onChange={setHiddenClasses}
          />
          <LayerToggles
            legend="States"
            values={OBJECT_STATES}
            hidden={hiddenStates}
            onChange={setHiddenStates}
          />
        </details>
        <CheckpointsPanel
          api={api}
          frameId={frameId}
          canRestore={reviewer}
          revision={revision}
          onRestored={(m) => void reload(m).catch((err: unknown) => setError(readableError(err)))}
        />
        <p class="hint">
          <kbd>B</kbd> box · <kbd>P</kbd> polygon · <kbd>L</kbd> polyline · <kbd>K</kbd> keypoints ·{' '}
          <kbd>C</kbd> class · <kbd>?</kbd> all keys
        </p>
      </aside>
      {picking && (
        <ClassPicker
          classes={classes}
          onCancel={() => setPicking(null)}
          onPick={(name) => {
            const p = picking;
            setPicking(null);
            if (p.for === 'create') create({ ...p.body, class_name: name });
            else void review({ action: 'edit', class_name: name });
          }}
        />
      )}
      {confirmDelete && selectedObject && (
        <div class="conflict" role="alertdialog" aria-label="Delete this object?">
          <h2>Delete this {selectedObject.class_name}?</h2>
          <p>
            The object is removed for everyone; its reviews stay in the history, and a checkpoint can bring it
            back.
          </p>
          <p class="choices">
            <kbd>Enter</kbd> delete · <kbd>Esc</kbd> keep it
          </p>
        </div>
      )}
      {conflict && (
        <ConflictDialog
          mine={shapeFacts(conflict.mine)}
          theirs={shapeFacts(conflict.theirs)}
          choices={
            <>
              <kbd>1</kbd> keep mine (my shape on their version) · <kbd>2</kbd> take theirs · <kbd>Esc</kbd>{' '}
              decide later
            </>
          }
        />
      )}
      {help && (
        <KeyHelp
          title="Frame editor keys"
          bindings={EDITOR_KEYS.filter((k) => reviewer || !k.reviewer)}
          note="Mouse: the wheel zooms about the pointer, dragging empty space pans."
        />
      )}
    </main>
  );
}

/**
 * State that event handlers read through the ref: pointer events can follow each other before a
 * render has given the handlers the newest value, and a click must never be lost to that.
 */
function useLatestState<T>(initial: T): [T, (value: T) => void, { readonly current: T }] {
  const [value, setValue] = useState(initial);
  const ref = useRef(initial);
  const set = useCallback((next: T) => {
    ref.current = next;
    setValue(() => next);
  }, []);
  return [value, set, ref];
}

/** One check box per value, checked while the value is shown (the Layers panel). */
function LayerToggles(props: {
  legend: string;
  values: readonly string[];
  hidden: Set<string>;
  onChange: (hidden: Set<string>) => void;
}) {
  return (
    <fieldset class="layers" aria-label={`${props.legend} shown`}>
      <legend>{props.legend}</legend>
      {props.values.map((v) => (
        <label key={v} class="check">
          <input
            type="checkbox"
            checked={!props.hidden.has(v)}
            onChange={(e) => {
              const next = new Set(props.hidden);
              if (e.currentTarget.checked) next.delete(v);
              else next.add(v);
              props.onChange(next);
            }}
          />
          {v}
        </label>
      ))}
    </fieldset>
  );
}

/** One side of a conflict: the object's class, state, version and where its shape lies. */
const shapeFacts = (o: EditorObject): ConflictFacts => [
  ['Class', o.class_name],
  ['State', o.state],
  ['Version', o.version],
  ['Box', <span class="mono">{o.bbox.map((v) => Math.round(v)).join(', ')}</span>],
  ...(o.rot_deg ? ([['Rotation', `${o.rot_deg}°`]] as ConflictFacts) : []),
];

/** How far a grab reaches, in frame pixels, at a view scale. */
const reach = (scale: number) => (GRAB_PX * (window.devicePixelRatio || 1)) / scale;

/** The handles the selected object shows, in frame pixels (`tol` as the hit test uses it). */
function handlesOf(o: EditorObject, active: Handle | null, tol: number): Handles {
  const kind = kindOf(o);
  const activePoint = (): Point | null => {
    if (active?.kind === 'vertex') {
      const ring = (active.part === 'mask' ? o.mask : o.polyline)?.[active.ring];
      const pt = ring ? ringPoints(ring)[active.index] : undefined;
      return pt ?? null;
    }
    if (active?.kind === 'keypoint') {
      const kp = o.keypoints?.[active.name];
      return kp ? [kp[0]!, kp[1]!] : null;
    }
    return null;
  };
  if (kind === 'box')
    return {
      points: boxCorners(o),
      active: null,
      rotate: { at: rotationHandle(o, tol * 3), from: rotationHandle(o, 0) },
    };
  if (kind === 'keypoints')
    return {
      points: Object.values(o.keypoints!).map((v) => [v[0]!, v[1]!]),
      active: activePoint(),
      rotate: null,
    };
  const rings = (kind === 'polygon' ? o.mask : o.polyline)!;
  return { points: rings.flatMap(ringPoints), active: activePoint(), rotate: null };
}
