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
  private scheduled = 0;
  view: View = { scale: 1, x: 0, y: 0 };
  /** Called after each paint with its duration in ms (the benchmark reads it). */
  onPainted: ((ms: number) => void) | null = null;

  constructor(readonly canvas: HTMLCanvasElement) {}

  setFrame(image: CanvasImageSource, width: number, height: number): void {
    this.image = image;
    this.size = { width, height };
    this.schedule();
  }

  setObjects(objects: PaintedObject[], selected: string | null = this.selected): void {
    this.objects = objects;
    this.selected = selected;
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
    for (const o of this.objects) {
      if (o.id === this.selected) {
        chosen = o;
        continue;
      }
      const colour = colourOf(o.state);
      let path = paths.get(colour);
      if (!path) paths.set(colour, (path = new Path2D()));
      trace(path, o);
    }
    ctx.lineWidth = 1.5 / scale;
    for (const [colour, path] of paths) {
      ctx.strokeStyle = colour;
      ctx.stroke(path);
    }
    if (chosen) {
      const path = new Path2D();
      trace(path, chosen);
      ctx.lineWidth = 4 / scale;
      ctx.strokeStyle = '#ffffff';
      ctx.stroke(path);
      ctx.lineWidth = 2 / scale;
      ctx.strokeStyle = colourOf(chosen.state);
      ctx.stroke(path);
    }
    this.onPainted?.(performance.now() - started);
  }
}

function trace(path: Path2D, o: PaintedObject): void {
  const corners = outline(o);
  path.moveTo(corners[0]![0], corners[0]![1]);
  for (let i = 1; i < corners.length; i++) path.lineTo(corners[i]![0], corners[i]![1]);
  path.closePath();
}
