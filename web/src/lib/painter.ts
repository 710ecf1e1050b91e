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
    this.schedule();
  }

  /** Objects for which `hide` answers true are not drawn (the editor's layer filter). */
  setHidden(hide: ((o: PaintedObject) => boolean) | null): void {
    this.hidden = hide;
    this.schedule();
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

  setView(view: View): void {
    this.view = view;
    this.schedule();
  }

  get selectedId(): string | null {
    return this.selected;
  }

  select(id: string | null): void {
    this.selected = id;
    this.schedule();
  }

  /** Fits the canvas to its element's size in device pixels. */
  resize(): void {
    const ratio = window.devicePixelRatio || 1;
    const { clientWidth, clientHeight } = this.canvas;
    this.canvas.width = Math.max(1, Math.round(clientWidth * ratio));
    this.canvas.height = Math.max(1, Math.round(clientHeight * ratio));
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
    this.view = {
      scale,
      x: (x1 + x2) / 2 - this.canvas.width / scale / 2,
      y: (y1 + y2) / 2 - this.canvas.height / scale / 2,
    };
    this.schedule();
  }

  /** Zooms by `factor` about a canvas point (device pixels). */
  zoomAt(factor: number, px: number, py: number): void {
    const { scale, x, y } = this.view;
    const next = Math.min(64, Math.max(this.frameScale() / 8, scale * factor));
    const fx = x + px / scale;
    const fy = y + py / scale;
    this.view = { scale: next, x: fx - px / next, y: fy - py / next };
    this.schedule();
  }

  panBy(dx: number, dy: number): void {
    this.view = {
      ...this.view,
      x: this.view.x - dx / this.view.scale,
      y: this.view.y - dy / this.view.scale,
    };
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
    const paths = new Map<string, Path2D>();
    let chosen: PaintedObject | null = null;
    const dot = 3 / scale;
    for (const o of this.objects) {
      if (this.hidden?.(o)) continue;
      if (o.id === this.selected) {
        chosen = o;
        continue;
      }
      const colour = colourOf(o.state);
      let path = paths.get(colour);
      if (!path) paths.set(colour, (path = new Path2D()));
      trace(path, o, dot);
    }
    ctx.lineWidth = 1.5 / scale;
    for (const [colour, path] of paths) {
      ctx.strokeStyle = colour;
      ctx.stroke(path);
    }
    if (chosen) {
      const path = new Path2D();
      trace(path, chosen, dot * 1.5);
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

/** Adds an object's shape to a path: its polygons, lines and keypoints, or its (rotated) box. */
function trace(path: Path2D, o: PaintedObject, dot: number): void {
  let drawn = false;
  for (const ring of o.mask ?? []) {
    traceRing(path, ring, true);
    drawn = true;
  }
  for (const line of o.polyline ?? []) {
    traceRing(path, line, false);
    drawn = true;
  }
  for (const kp of Object.values(o.keypoints ?? {})) {
    path.moveTo(kp[0]! + dot, kp[1]!);
    path.arc(kp[0]!, kp[1]!, dot, 0, 2 * Math.PI);
    drawn = true;
  }
  if (drawn) return;
  const corners = outline(o);
  path.moveTo(corners[0]![0], corners[0]![1]);
  for (let i = 1; i < corners.length; i++) path.lineTo(corners[i]![0], corners[i]![1]);
  path.closePath();
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
