import { performance } from 'node:perf_hooks';
import sharp from 'sharp';
import { detectPii } from '../activities/pii/detector';
import { redactFrame } from '../activities/pii/redact';
import type { Box } from '../core/geometry';
import type { PiiKind, PiiRegion } from '../core/pii/regions';
import { skimagePhoto } from '../testkit/media/photos';
import { vehicleFrames } from '../testkit/media/vehicles';
import { testConfig } from '../testkit/stack';

/**
 * The PII pass per 1080p frame (issue 21: target ≤ 100 ms on this machine's CPU), detection and
 * redacted copy, with the two-pass text search (coarse side 640) and smaller face input against the single
 * whole-frame pass of before (APP_PII__TEXT_COARSE_SIDE=0, faces at 1280), alternated frame by
 * frame in the same run so load from other processes weighs on both alike. The frames are real
 * photographs (the bus and motorcycle scene of testkit/media/vehicles.ts) with the astronaut's
 * face at two sizes and plates rendered at three heights, all at known places: recall is counted
 * on those, and beside it how many of the regions the single pass redacts the two passes cover.
 */
const FRAMES = 6;
const ROUNDS = 2;
const WIDTH = 1920;
/** The astronaut's face in astronaut.png (512×512), marked by hand (test/pii.int.test.ts). */
const ASTRONAUT_FACE: Box = [180, 65, 265, 175];
const FACE_PHOTO_SIDES = [300, 120];
const PLATE_HEIGHTS = [24, 36, 48];
const PLATE_TEXT = ['LD71 0KR', 'KA 05 MH 2931', 'B-XY 4821'];

interface Truth {
  kind: PiiKind;
  box: Box;
}

async function benchFrames(): Promise<Array<{ jpeg: Buffer; truth: Truth[] }>> {
  const scenes = await vehicleFrames(FRAMES, { width: WIDTH, step: 0.02 });
  const out = [];
  for (const [i, scene] of scenes.entries()) {
    const composites = [];
    const truth: Truth[] = [];
    let x = 700 + i * 40;
    for (const side of FACE_PHOTO_SIDES) {
      const k = side / 512;
      composites.push({
        input: await sharp(skimagePhoto('astronaut.png')).resize(side).toBuffer(),
        left: x,
        top: 60,
      });
      truth.push({
        kind: 'face',
        box: [
          x + ASTRONAUT_FACE[0] * k,
          60 + ASTRONAUT_FACE[1] * k,
          x + ASTRONAUT_FACE[2] * k,
          60 + ASTRONAUT_FACE[3] * k,
        ],
      });
      x += side + 40;
    }
    let px = 1000 - i * 30;
    for (const [j, h] of PLATE_HEIGHTS.entries()) {
      const text = PLATE_TEXT[j]!;
      const w = Math.round(h * 0.62 * text.length + h * 0.8);
      const top = 560 + j * 90;
      const svg = `<svg width="${w}" height="${h}"><rect x="1" y="1" width="${w - 2}" height="${h - 2}" fill="#f2f2ea" stroke="#222" stroke-width="2"/><text x="${w / 2}" y="${h * 0.76}" font-family="DejaVu Sans Mono" font-weight="bold" font-size="${h * 0.72}" text-anchor="middle" fill="#111">${text}</text></svg>`;
      composites.push({ input: Buffer.from(svg), left: px, top });
      truth.push({ kind: 'plate', box: [px, top, px + w, top + h] });
      px += 60;
    }
    out.push({ jpeg: await sharp(scene.jpeg).composite(composites).jpeg({ quality: 90 }).toBuffer(), truth });
  }
  return out;
}

/** A known item counts as found when a region of its kind has its centre on it and spans most of its width. */
const covers = (r: PiiRegion, kind: PiiKind, [x1, y1, x2, y2]: Box): boolean => {
  const [rx1, ry1, rx2, ry2] = r.bbox;
  const cx = (rx1 + rx2) / 2;
  const cy = (ry1 + ry2) / 2;
  return (
    r.kind === kind &&
    cx > x1 &&
    cx < x2 &&
    cy > y1 &&
    cy < y2 &&
    Math.min(rx2, x2) - Math.max(rx1, x1) >= 0.6 * (x2 - x1)
  );
};

export async function run(): Promise<void> {
  const frames = await benchFrames();
  const modes = {
    'single pass (before)': testConfig({ APP_PII__TEXT_COARSE_SIDE: '0', APP_PII__FACE_MAX_SIDE: '1280' }),
    'two passes (coarse 640)': testConfig({ APP_PII__TEXT_COARSE_SIDE: '640' }),
  };
  const ms = new Map<string, number[]>();
  const found = new Map<string, PiiRegion[][]>();
  // The first call loads the models: not timed.
  for (const config of Object.values(modes)) await detectPii(config, frames[0]!.jpeg);
  for (let round = 0; round < ROUNDS; round++) {
    for (const frame of frames) {
      for (const [name, config] of Object.entries(modes)) {
        const t0 = performance.now();
        const result = await detectPii(config, frame.jpeg);
        await redactFrame(result.rgb, result.width, result.height, result.regions);
        ms.set(name, [...(ms.get(name) ?? []), performance.now() - t0]);
        if (round === 0) found.set(name, [...(found.get(name) ?? []), result.regions]);
      }
    }
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const before = found.get('single pass (before)')!;
  const baseMs = mean(ms.get('single pass (before)')!);
  console.log(`PII pass on ${FRAMES} real 1920×1080 frames × ${ROUNDS} rounds (detection + redacted JPEG):`);
  for (const name of Object.keys(modes)) {
    const regions = found.get(name)!;
    const recall = (kind: PiiKind) => {
      const items = frames.flatMap((f, i) => f.truth.filter((t) => t.kind === kind).map((t) => ({ t, i })));
      const hit = items.filter(({ t, i }) => regions[i]!.some((r) => covers(r, kind, t.box))).length;
      return `${hit}/${items.length}`;
    };
    const oldRegions = before.flatMap((rs, i) => rs.map((r) => ({ r, i })));
    const kept = oldRegions.filter(({ r, i }) => regions[i]!.some((n) => covers(n, r.kind, r.bbox))).length;
    const m = mean(ms.get(name)!);
    console.log(
      `  ${name.padEnd(22)} ${m.toFixed(0).padStart(4)} ms/frame (target ≤ 100; ${(m / baseMs).toFixed(2)}× before)  faces ${recall('face')}  plates ${recall('plate')}  regions of the single pass covered ${kept}/${oldRegions.length}`,
    );
  }
}
