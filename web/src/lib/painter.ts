/** A box, [x1, y1, x2, y2] in frame pixels. */
export type Box = [number, number, number, number];

/** What the painter draws of an object. */
export interface PaintedObject {
  id: string;
  bbox: Box;
  /** A rotated box before rotation, turned by rot_deg clockwise about its centre; null when axis-aligned. */
  rbox: Box | null;
  rot_deg: number;
  state: string;
  class_name: string;
  /** Mask rings, flat [x, y, …]; when present the object is drawn as its polygons. */
  mask?: number[][] | null;
  /** Open lines, flat [x, y, …]. */
  polyline?: number[][] | null;
  keypoints?: Record<string, number[]> | null;
}

/** A shape being drawn (points so far, and where the pointer is). */
export interface Draft {
  kind: 'box' | 'polygon' | 'polyline' | 'keypoints';
  points: Array<[number, number]>;
  pointer: [number, number] | null;
}

/** Handles drawn on the selected object, in frame pixels (the editor's, from lib/shapes.ts). */
export interface Handles {
  points: Array<[number, number]>;
  /** The handle a person grabbed or chose, drawn filled. */
  active: [number, number] | null;
  /** Where the rotation handle is, joined to the box by a line. */
  rotate: { at: [number, number]; from: [number, number] } | null;
}

/** The largest side of the outlines' own canvas. */
const MAX_RASTER = 4096;
/** How long the view must stay still before the outlines are drawn again for it. */
const SETTLE_MS = 120;

interface Raster {
  canvas: HTMLCanvasElement;
  /** The view the outlines were drawn for; `margin` device pixels lie beyond each side of it. */
  view: View;
  margin: [number, number];
}

interface Layer {
  paths: Map<string, Path2D>;
  keypoints: Map<string, PaintedObject[]>;
  chosen: PaintedObject | null;
}

/** Frame pixels to canvas pixels: screen = (frame − origin) × scale. */
export interface View {
  scale: number;
  x: number;
  y: number;
}

const STATE_COLOURS: Record<string, string> = {
  review: '#f5a524',
  submitted: '#5b8def',
  annotate: '#b06ce0',
  auto_accept: '#23b5a8',
  accepted: '#2fb344',
  rejected: '#e5484d',
};
const colourOf = (state: string) => STATE_COLOURS[state] ?? '#8a94a6';

/** The four corners of an object's outline, in frame pixels. */
export function outline(o: Pick<PaintedObject, 'bbox' | 'rbox' | 'rot_deg'>): Array<[number, number]> {
  const [x1, y1, x2, y2] = o.rbox ?? o.bbox;
  const corners: Array<[number, number]> = [
    [x1, y1],
    [x2, y1],
    [x2, y2],
    [x1, y2],
  ];
  if (!o.rbox || !o.rot_deg) return corners;
  const cx = (x1 + x2) / 2;
  const cy = (y1 + y2) / 2;
  const a = (o.rot_deg * Math.PI) / 180;
  const [cos, sin] = [Math.cos(a), Math.sin(a)];
  return corners.map(([x, y]) => [
    cx + (x - cx) * cos - (y - cy) * sin,
    cy + (x - cx) * sin + (y - cy) * cos,
  ]);
}

/**
 * Paints a frame and its objects on one canvas (not one DOM node per shape, so a thousand boxes
 * are one path per state colour). Paints are coalesced to one per animation frame.
 */
export class FramePainter {
  private image: CanvasImageSource | null = null;
  private size = { width: 1, height: 1 };
  private objects: PaintedObject[] = [];
  private selected: string | null = null;
  private hidden: ((o: PaintedObject) => boolean) | null = null;
  private draft: Draft | null = null;
  private handles: ((scale: number) => Handles | null) | null = null;
  private layer: Layer | null = null;
  private raster: Raster | null = null;
  /** The canvas the outlines are rasterised into, kept for the next raster (it can be 4096² px). */
  private rasterCanvas: HTMLCanvasElement | null = null;
  private settle = 0;
  /** True while a person pans or zooms (a jump to an object or the whole frame is no motion). */
  private moving = false;
  private scheduled = 0;
  view: View = { scale: 1, x: 0, y: 0 };
  /** Called after each paint with its duration in ms (the benchmark reads it). */
  onPainted: ((ms: number) => void) | null = null;

  constructor(readonly canvas: HTMLCanvasElement) {}

  /** The frame's image (null while it loads: the objects are drawn on an empty frame). */
  setFrame(image: CanvasImageSource | null, width: number, height: number): void {
    this.image = image;
    this.size = { width, height };
    this.schedule();
  }

  setObjects(objects: PaintedObject[], selected: string | null = this.selected): void {
    this.objects = objects;
    this.selected = selected;
    this.redraw();
  }

  /** Objects for which `hide` answers true are not drawn (the editor's layer filter). */
  setHidden(hide: ((o: PaintedObject) => boolean) | null): void {
    this.hidden = hide;
    this.redraw();
  }

  setDraft(draft: Draft | null): void {
    this.draft = draft;
    this.schedule();
  }

  /** Handles are laid out at paint time, since their reach is a number of screen pixels. */
  setHandles(handles: ((scale: number) => Handles | null) | null): void {
    this.handles = handles;
    this.schedule();
  }

  /** Canvas (device) pixels to frame pixels. */
  toFrame(px: number, py: number): [number, number] {
    return [this.view.x + px / this.view.scale, this.view.y + py / this.view.scale];
  }

  /** One frame pixel per device pixel, centred where the view is centred now. */
  actualSize(): void {
    const cx = this.view.x + this.canvas.width / this.view.scale / 2;
    const cy = this.view.y + this.canvas.height / this.view.scale / 2;
    this.setView({ scale: 1, x: cx - this.canvas.width / 2, y: cy - this.canvas.height / 2 });
  }

  /** What is drawn changed (objects, selection, layers): the outlines are laid out again. */
  private redraw(): void {
    this.layer = null;
    this.raster = null;
    this.schedule();
  }

  /** Jumps to a view (no motion: the outlines are drawn sharp for it at once). */
  setView(view: View): void {
    this.view = view;
    this.moving = false;
    this.raster = null;
    this.schedule();
  }

  get selectedId(): string | null {
    return this.selected;
  }

  select(id: string | null): void {
    this.selected = id;
    this.redraw();
  }

  /** Fits the canvas to its element's size in device pixels. */
  resize(): void {
    const ratio = window.devicePixelRatio || 1;
    const { clientWidth, clientHeight } = this.canvas;
    this.canvas.width = Math.max(1, Math.round(clientWidth * ratio));
    this.canvas.height = Math.max(1, Math.round(clientHeight * ratio));
    this.raster = null;
    this.schedule();
  }

  /** The whole frame in view. */
  fitFrame(): void {
    this.fitBox([0, 0, this.size.width, this.size.height], 1);
  }

  /** A box in view with `context` times its size around it (at most the whole frame's scale × 8). */
  fitBox(box: Box, context = 3): void {
    const [x1, y1, x2, y2] = box;
    const w = Math.max(8, (x2 - x1) * context);
    const h = Math.max(8, (y2 - y1) * context);
    const scale = Math.min(this.canvas.width / w, this.canvas.height / h, 8 * this.frameScale());
    this.setView({
      scale,
      x: (x1 + x2) / 2 - this.canvas.width / scale / 2,
      y: (y1 + y2) / 2 - this.canvas.height / scale / 2,
    });
  }

  /** Zooms by `factor` about a canvas point (device pixels). */
  zoomAt(factor: number, px: number, py: number): void {
    const { scale, x, y } = this.view;
    const next = Math.min(64, Math.max(this.frameScale() / 8, scale * factor));
    const fx = x + px / scale;
    const fy = y + py / scale;
    this.view = { scale: next, x: fx - px / next, y: fy - py / next };
    this.moving = true;
    this.schedule();
  }

  panBy(dx: number, dy: number): void {
    this.view = {
      ...this.view,
      x: this.view.x - dx / this.view.scale,
      y: this.view.y - dy / this.view.scale,
    };
    this.moving = true;
    this.schedule();
  }

  private frameScale(): number {
    return Math.min(this.canvas.width / this.size.width, this.canvas.height / this.size.height);
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = requestAnimationFrame(() => {
      this.scheduled = 0;
      this.paint();
    });
  }

  /**
   * The objects' outlines in frame pixels, one path per state colour, kept until the objects, the
   * selection or the layers change: panning and zooming only transform them.
   */
  private buildLayer(): Layer {
    const paths = new Map<string, Path2D>();
    const keypoints = new Map<string, PaintedObject[]>();
    let chosen: PaintedObject | null = null;
    for (const o of this.objects) {
      if (this.hidden?.(o)) continue;
      if (o.id === this.selected) {
        chosen = o;
        continue;
      }
      const colour = colourOf(o.state);
      let path = paths.get(colour);
      if (!path) paths.set(colour, (path = new Path2D()));
      trace(path, o);
      if (o.keypoints && Object.keys(o.keypoints).length) {
        const list = keypoints.get(colour);
        if (list) list.push(o);
        else keypoints.set(colour, [o]);
      }
    }
    return { paths, keypoints, chosen };
  }

  /**
   * The outlines drawn once for the current view into a canvas of their own, with a margin around
   * the visible part (up to 4096 px a side), so panning and zooming only move and scale that
   * picture: thousands of outlines rasterised again at every pointer move cost more than a frame's
   * time on a CPU rasteriser (bench/web-ui.ts).
   */
  private rasterise(layer: Layer): Raster {
    const { width, height } = this.canvas;
    const margin: [number, number] = [
      Math.max(0, Math.min(width / 2, (MAX_RASTER - width) / 2)) | 0,
      Math.max(0, Math.min(height / 2, (MAX_RASTER - height) / 2)) | 0,
    ];
    const canvas = (this.rasterCanvas ??= document.createElement('canvas'));
    canvas.width = width + 2 * margin[0];
    canvas.height = height + 2 * margin[1];
    const ctx = canvas.getContext('2d')!;
    const { scale, x, y } = this.view;
    ctx.setTransform(scale, 0, 0, scale, margin[0] - x * scale, margin[1] - y * scale);
    strokeOutlines(ctx, layer, scale);
    return { canvas, view: { ...this.view }, margin };
  }

  /** Once the view has stayed still a moment, the outlines are drawn again, sharp, for it. */
  private settleLater(): void {
    window.clearTimeout(this.settle);
    this.settle = window.setTimeout(() => {
      this.moving = false;
      this.raster = null;
      this.schedule();
    }, SETTLE_MS);
  }

  /** Paints at once instead of at the next animation frame (a key press's answer). */
  paintNow(): void {
    if (this.scheduled) cancelAnimationFrame(this.scheduled);
    this.scheduled = 0;
    this.paint();
  }

  /** Paints now (tests and benchmarks call it directly). */
  paint(): void {
    const started = performance.now();
    const ctx = this.canvas.getContext('2d');
    if (!ctx) return;
    const { scale, x, y } = this.view;
    ctx.setTransform(1, 0, 0, 1, 0, 0);
    ctx.fillStyle = '#1b1f27';
    ctx.fillRect(0, 0, this.canvas.width, this.canvas.height);
    ctx.setTransform(scale, 0, 0, scale, -x * scale, -y * scale);
    if (this.image) ctx.drawImage(this.image, 0, 0, this.size.width, this.size.height);
    const layer = (this.layer ??= this.buildLayer());
    if (this.moving) {
      // While the person pans or zooms, the outlines drawn once for the view are moved and scaled.
      const raster = (this.raster ??= this.rasterise(layer));
      const k = scale / raster.view.scale;
      ctx.setTransform(1, 0, 0, 1, 0, 0);
      ctx.drawImage(
        raster.canvas,
        (raster.view.x - x) * scale - raster.margin[0] * k,
        (raster.view.y - y) * scale - raster.margin[1] * k,
        raster.canvas.width * k,
        raster.canvas.height * k,
      );
      ctx.setTransform(scale, 0, 0, scale, -x * scale, -y * scale);
      this.settleLater();
    } else strokeOutlines(ctx, layer, scale);
    // Keypoint dots keep their size on screen, so they are laid out at each paint (they are few).
    const dot = 3 / scale;
    ctx.lineWidth = 1 / scale;
    for (const [colour, objects] of layer.keypoints) {
      const path = new Path2D();
      for (const o of objects) traceKeypoints(path, o, dot);
      ctx.strokeStyle = colour;
      ctx.stroke(path);
    }
    const chosen = layer.chosen;
    if (chosen) {
      const path = new Path2D();
      trace(path, chosen);
      traceKeypoints(path, chosen, dot * 1.5);
      ctx.lineWidth = 4 / scale;
      ctx.strokeStyle = '#ffffff';
      ctx.stroke(path);
      ctx.lineWidth = 2 / scale;
      ctx.strokeStyle = colourOf(chosen.state);
      ctx.stroke(path);
    }
    const handles = this.handles?.(scale);
    if (handles) paintHandles(ctx, handles, scale);
    if (this.draft) paintDraft(ctx, this.draft, scale);
    this.onPainted?.(performance.now() - started);
  }
}

/** The wheel zooms the canvas about the pointer (its own scroll is not the page's). */
export function zoomOnWheel(
  painter: FramePainter | null,
  e: WheelEvent & { currentTarget: HTMLCanvasElement },
): void {
  e.preventDefault();
  const r = e.currentTarget.getBoundingClientRect();
  const ratio = window.devicePixelRatio || 1;
  painter?.zoomAt(Math.exp(-e.deltaY / 300), (e.clientX - r.left) * ratio, (e.clientY - r.top) * ratio);
}

/**
 * The outlines, one stroke per state colour, one device pixel wide: the hairline is the
 * rasteriser's fast case, about three times cheaper than 1.5 px over thousands of outlines.
 */
function strokeOutlines(ctx: CanvasRenderingContext2D, layer: Layer, scale: number): void {
  ctx.lineWidth = 1 / scale;
  for (const [colour, path] of layer.paths) {
    ctx.strokeStyle = colour;
    ctx.stroke(path);
  }
}

/**
 * Adds an object's outline to a path: its polygons and lines, or its (rotated) box; an object of
 * keypoints alone adds nothing here (traceKeypoints draws its dots).
 */
function trace(path: Path2D, o: PaintedObject): void {
  let drawn = false;
  for (const ring of o.mask ?? []) {
    traceRing(path, ring, true);
    drawn = true;
  }
  for (const line of o.polyline ?? []) {
    traceRing(path, line, false);
    drawn = true;
  }
  if (drawn || (o.keypoints && Object.keys(o.keypoints).length)) return;
  const corners = outline(o);
  path.moveTo(corners[0]![0], corners[0]![1]);
  for (let i = 1; i < corners.length; i++) path.lineTo(corners[i]![0], corners[i]![1]);
  path.closePath();
}

function traceKeypoints(path: Path2D, o: PaintedObject, dot: number): void {
  for (const kp of Object.values(o.keypoints ?? {})) {
    path.moveTo(kp[0]! + dot, kp[1]!);
    path.arc(kp[0]!, kp[1]!, dot, 0, 2 * Math.PI);
  }
}

function traceRing(path: Path2D, ring: readonly number[], closed: boolean): void {
  if (ring.length < 4) return;
  path.moveTo(ring[0]!, ring[1]!);
  for (let i = 2; i + 1 < ring.length; i += 2) path.lineTo(ring[i]!, ring[i + 1]!);
  if (closed) path.closePath();
}

function paintHandles(ctx: CanvasRenderingContext2D, h: Handles, scale: number): void {
  const r = 4 / scale;
  ctx.lineWidth = 1.5 / scale;
  if (h.rotate) {
    ctx.beginPath();
    ctx.moveTo(h.rotate.from[0], h.rotate.from[1]);
    ctx.lineTo(h.rotate.at[0], h.rotate.at[1]);
    ctx.strokeStyle = '#ffffff';
    ctx.stroke();
    ctx.beginPath();
    ctx.arc(h.rotate.at[0], h.rotate.at[1], r, 0, 2 * Math.PI);
    ctx.fillStyle = '#2458d3';
    ctx.fill();
    ctx.stroke();
  }
  const squares = new Path2D();
  for (const [x, y] of h.points) squares.rect(x - r, y - r, 2 * r, 2 * r);
  ctx.fillStyle = '#ffffff';
  ctx.fill(squares);
  ctx.strokeStyle = '#1c2230';
  ctx.stroke(squares);
  if (h.active) {
    ctx.fillStyle = '#2458d3';
    ctx.fillRect(h.active[0] - r, h.active[1] - r, 2 * r, 2 * r);
  }
}

function paintDraft(ctx: CanvasRenderingContext2D, d: Draft, scale: number): void {
  const pts = d.pointer ? [...d.points, d.pointer] : d.points;
  if (!pts.length) return;
  ctx.lineWidth = 2 / scale;
  ctx.strokeStyle = '#ffe14d';
  ctx.setLineDash([6 / scale, 4 / scale]);
  ctx.beginPath();
  if (d.kind === 'box' && pts.length >= 2) {
    const [a, b] = [pts[0]!, pts[pts.length - 1]!];
    ctx.rect(Math.min(a[0], b[0]), Math.min(a[1], b[1]), Math.abs(b[0] - a[0]), Math.abs(b[1] - a[1]));
  } else if (d.kind !== 'keypoints') {
    ctx.moveTo(pts[0]![0], pts[0]![1]);
    for (const [x, y] of pts.slice(1)) ctx.lineTo(x, y);
    if (d.kind === 'polygon' && !d.pointer) ctx.closePath();
  }
  ctx.stroke();
  ctx.setLineDash([]);
  ctx.fillStyle = '#ffe14d';
  for (const [x, y] of d.points) {
    ctx.beginPath();
    ctx.arc(x, y, 3.5 / scale, 0, 2 * Math.PI);
    ctx.fill();
  }
}
