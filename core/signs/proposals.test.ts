import { proposeSigns } from './proposals';

const W = 320;
const H = 200;
type Rgb = [number, number, number];
const RED: Rgb = [200, 16, 46];
const BLUE: Rgb = [31, 95, 191];
const YELLOW: Rgb = [242, 197, 0];
const WHITE: Rgb = [245, 245, 245];

/** A grey road scene with shapes painted by predicate. */
function scene(shapes: Array<{ rgb: Rgb; inside: (x: number, y: number) => boolean }>): Uint8Array {
  const img = new Uint8Array(W * H * 3).fill(128);
  for (let y = 0; y < H; y++)
    for (let x = 0; x < W; x++) for (const s of shapes) if (s.inside(x, y)) img.set(s.rgb, (y * W + x) * 3);
  return img;
}
const ring = (cx: number, cy: number, r: number, inner: number) => (x: number, y: number) => {
  const d = Math.hypot(x + 0.5 - cx, y + 0.5 - cy);
  return d <= r && d > inner;
};
const disc = (cx: number, cy: number, r: number) => ring(cx, cy, r, -1);
const rect = (x1: number, y1: number, x2: number, y2: number) => (x: number, y: number) =>
  x >= x1 && x < x2 && y >= y1 && y < y2;

test('proposes rims, discs and diamonds of sign colours at sign sizes', () => {
  const img = scene([
    { rgb: WHITE, inside: disc(40, 40, 15) },
    { rgb: RED, inside: ring(40, 40, 20, 15) }, // a speed-limit rim, 40 px
    { rgb: BLUE, inside: disc(120, 40, 12) }, // a mandatory disc, 24 px …
    { rgb: WHITE, inside: rect(117, 32, 123, 48) }, // … with its white arrow
    {
      rgb: YELLOW,
      inside: (x, y) => Math.abs(x + 0.5 - 200) + Math.abs(y + 0.5 - 40) <= 16, // priority diamond
    },
  ]);
  const found = proposeSigns(img, W, H);
  expect(found.map((p) => p.colour).sort()).toEqual(['blue', 'red', 'yellow']);
  const rim = found.find((p) => p.colour === 'red')!;
  expect(rim.box).toEqual([20, 20, 60, 60]);
  expect(rim.fill).toBeGreaterThan(0.2);
  expect(rim.fill).toBeLessThan(0.5);
  expect(found.find((p) => p.colour === 'blue')!.box).toEqual([108, 28, 132, 52]);
  // The most box-filling first: the disc (π/4) before the diamond (1/2) before the rim.
  expect(found.map((p) => p.colour)).toEqual(['blue', 'yellow', 'red']);
  expect(found.map((p) => p.shape)).toEqual(['circle', 'diamond', 'circle']);
});

test('fits triangles both ways up and refuses blobs that match no face shape', () => {
  const img = scene([
    { rgb: RED, inside: (x, y) => y >= 10 && y < 50 && Math.abs(x + 0.5 - 40) <= (y - 10) / 2 + 0.5 }, // warning
    { rgb: WHITE, inside: (x, y) => y >= 25 && y < 45 && Math.abs(x + 0.5 - 40) <= (y - 25) / 2 }, // its field
    { rgb: RED, inside: (x, y) => y >= 10 && y < 50 && Math.abs(x + 0.5 - 120) <= (50 - y) / 2 + 0.5 }, // yield
    { rgb: WHITE, inside: (x, y) => y >= 15 && y < 35 && Math.abs(x + 0.5 - 120) <= (35 - y) / 2 }, // its field
    { rgb: RED, inside: rect(180, 10, 220, 50) }, // a square red panel: no sign face is square
    { rgb: WHITE, inside: rect(190, 25, 210, 35) },
    { rgb: BLUE, inside: disc(60, 140, 20) }, // a blue wheel hub: a disc, but no white on it
    { rgb: BLUE, inside: (x, y) => rect(250, 10, 290, 50)(x, y) && !rect(262, 10, 278, 38)(x, y) }, // a U
  ]);
  const found = proposeSigns(img, W, H);
  expect(found.map((p) => p.shape).sort()).toEqual(['triangle_down', 'triangle_up']);
  expect(found.find((p) => p.shape === 'triangle_up')!.box).toEqual([20, 10, 60, 50]);
});

test('leaves out what is too small, too large, too elongated, too sparse or not sign-coloured', () => {
  const img = scene([
    { rgb: RED, inside: disc(30, 30, 5) }, // 10 px: under GTSRB's smallest crops
    { rgb: RED, inside: rect(60, 0, 160, 80) }, // taller than a quarter of the frame
    { rgb: BLUE, inside: rect(170, 150, 300, 170) }, // a long blue stripe (aspect 6.5)
    { rgb: [60, 160, 60], inside: disc(250, 50, 20) }, // green: no sign colour we propose
    { rgb: [150, 110, 110], inside: disc(200, 110, 20) }, // reddish but washed out
    {
      rgb: RED,
      inside: (x, y) => (x === 20 || y === 150) && x >= 20 && x < 60 && y >= 150 && y < 190, // a thin L
    },
  ]);
  expect(proposeSigns(img, W, H)).toEqual([]);
});

test('keeps at most the configured number of proposals, the most box-filling first', () => {
  const shapes = Array.from({ length: 6 }, (_, i) => ({
    rgb: RED,
    inside: ring(25 + i * 50, 100, 18, i < 3 ? -1 : 12),
  }));
  // minWhite 0: these faces carry no legend.
  const found = proposeSigns(scene(shapes), W, H, {
    minSide: 14,
    maxSideShare: 0.25,
    minAspect: 0.5,
    maxAspect: 1.6,
    minFill: 0.2,
    maxFill: 0.95,
    minShapeIou: 0.8,
    minWhite: 0,
    maxProposals: 3,
  });
  expect(found).toHaveLength(3);
  for (const p of found) expect(p.fill).toBeGreaterThan(0.7);
});
