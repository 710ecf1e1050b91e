import fs from 'node:fs';
import sharp from 'sharp';
import { detectPii } from '../activities/pii/detector';
import { redactFrame } from '../activities/pii/redact';
import { iou, type Box } from '../core/geometry';
import { UnavailableError } from '../core/errors';
import { skimagePhoto } from '../testkit/media/photos';
import { testConfig } from '../testkit/stack';

/**
 * Detection quality of the PII pass, measured on real photographs with the real models
 * (onnxruntime-node): faces from Debian's python3-skimage (the public-domain astronaut.png, and
 * the 100 faces / 100 non-faces of its LFW subset), licence plates rendered onto real photographs.
 */
const config = testConfig();

describe('faces (YuNet)', () => {
  it("finds the astronaut's face where a person marked it", async () => {
    const found = await detectPii(config, fs.readFileSync(skimagePhoto('astronaut.png')));
    const marked: Box = [180, 65, 265, 175]; // forehead to chin, annotated by hand
    expect(found.faces).toHaveLength(1);
    expect(iou(found.faces[0]!.box, marked)).toBeGreaterThan(0.6);
    expect(found.regions[0]).toMatchObject({ kind: 'face' });
  });

  /** 100 LFW crops (25×25 grey), scaled to 96 px and laid out on a grey sheet; ground truth is each tile. */
  async function lfwSheet(first: number): Promise<{ sheet: Buffer; tiles: Box[] }> {
    const npy = fs.readFileSync(skimagePhoto('lfw_subset.npy'));
    const data = npy.subarray(10 + npy.readUInt16LE(8)); // float64, (200, 25, 25), values 0..1
    const TILE = 96;
    const GAP = 40;
    const composites = [];
    const tiles: Box[] = [];
    for (let k = 0; k < 100; k++) {
      const px = Buffer.alloc(625);
      for (let p = 0; p < 625; p++)
        px[p] = Math.round(Math.min(1, Math.max(0, data.readDoubleLE(((first + k) * 625 + p) * 8))) * 255);
      const x = GAP + (k % 10) * (TILE + GAP);
      const y = GAP + Math.floor(k / 10) * (TILE + GAP);
      composites.push({
        input: await sharp(px, { raw: { width: 25, height: 25, channels: 1 } })
          .resize(TILE, TILE)
          .toColourspace('srgb')
          .png()
          .toBuffer(),
        left: x,
        top: y,
      });
      tiles.push([x, y, x + TILE, y + TILE]);
    }
    const side = GAP + 10 * (TILE + GAP);
    const sheet = await sharp({
      create: { width: side, height: side, channels: 3, background: { r: 128, g: 128, b: 128 } },
    })
      .composite(composites)
      .png()
      .toBuffer();
    return { sheet, tiles };
  }

  it('finds at least 90 of the 100 LFW faces (IoU ≥ 0.3 with the tile) and at most 5 faces among the 100 non-faces', async () => {
    const wide = testConfig({ APP_PII__DETECT_MAX_SIDE: '1400' });
    const faces = await lfwSheet(0);
    const onFaces = await detectPii(wide, faces.sheet);
    const recall =
      faces.tiles.filter((t) => onFaces.faces.some((f) => iou(f.box, t) >= 0.3)).length / faces.tiles.length;
    console.log(`YuNet recall on LFW faces: ${recall}`);
    expect(recall).toBeGreaterThanOrEqual(0.9);
    const nonFaces = await lfwSheet(100);
    expect((await detectPii(wide, nonFaces.sheet)).faces.length).toBeLessThanOrEqual(5);
  });
});

describe('licence plates (PaddleOCR DB text detector)', () => {
  const PLATES = ['AB12 CDE', 'KA 05 MH 2931', 'B-XY 4821', '7ABC123', 'LD71 0KR', 'MH12 DE1433'];

  /** Renders plates (dark text on a light plate with a border) onto a real photograph; returns their rectangles. */
  async function platesOn(photo: string, sizes: number[]): Promise<{ image: Buffer; plates: Box[] }> {
    const base = sharp(skimagePhoto(photo as 'coffee.png')).resize(1280, 720, { fit: 'cover' });
    const composites = [];
    const plates: Box[] = [];
    let x = 40;
    let y = 60;
    for (const [i, h] of sizes.entries()) {
      const text = PLATES[i % PLATES.length]!;
      const w = Math.round(h * 0.62 * text.length + h * 0.8);
      if (x + w > 1240) {
        x = 40;
        y += 220;
      }
      const svg = `<svg width="${w}" height="${h}"><rect x="1" y="1" width="${w - 2}" height="${h - 2}" rx="${h / 8}" fill="#f2f2ea" stroke="#222" stroke-width="${Math.max(2, h / 14)}"/><text x="${w / 2}" y="${h * 0.76}" font-family="DejaVu Sans Mono" font-weight="bold" font-size="${h * 0.72}" text-anchor="middle" fill="#111">${text}</text></svg>`;
      composites.push({ input: Buffer.from(svg), left: x, top: y + (i % 2) * 50 });
      plates.push([x, y + (i % 2) * 50, x + w, y + (i % 2) * 50 + h]);
      x += w + 80;
    }
    return { image: await base.composite(composites).png().toBuffer(), plates };
  }

  it('finds at least 5 of 6 plates of different sizes on each of three real photographs, and the redaction covers them', async () => {
    let found = 0;
    let total = 0;
    for (const photo of ['coffee.png', 'chelsea.png', 'motorcycle_left.png']) {
      const { image, plates } = await platesOn(photo, [22, 28, 36, 44, 56, 70]);
      const result = await detectPii(config, image);
      // A plate is found when a plate region's centre lies on it and the region spans most of its width.
      const hit = (p: Box) =>
        result.regions.some((r) => {
          const [x1, y1, x2, y2] = r.bbox;
          const cx = (x1 + x2) / 2;
          const cy = (y1 + y2) / 2;
          return (
            r.kind === 'plate' &&
            cx > p[0] &&
            cx < p[2] &&
            cy > p[1] &&
            cy < p[3] &&
            Math.min(x2, p[2]) - Math.max(x1, p[0]) >= 0.6 * (p[2] - p[0])
          );
        });
      const hits = plates.filter(hit).length;
      console.log(`plates found on ${photo}: ${hits}/${plates.length}`);
      expect(hits).toBeGreaterThanOrEqual(5);
      found += hits;
      total += plates.length;

      // Inside a found plate the redacted copy has far less detail than the original.
      const redacted = await redactFrame(result.rgb, result.width, result.height, result.regions);
      const p = plates.find(hit)!;
      const detail = async (img: Buffer) => {
        const { data } = await sharp(img)
          .extract({ left: p[0] + 4, top: p[1] + 4, width: p[2] - p[0] - 8, height: p[3] - p[1] - 8 })
          .greyscale()
          .raw()
          .toBuffer({ resolveWithObject: true });
        let s = 0;
        for (let i = 1; i < data.length; i++) s += Math.abs(data[i]! - data[i - 1]!);
        return s / data.length;
      };
      expect(await detail(redacted)).toBeLessThan((await detail(image)) / 3);
    }
    console.log(`plate recall: ${found}/${total}`);
  });
});

describe('missing models', () => {
  it('refuse by name', async () => {
    const missing = testConfig({ APP_MODELS__FACE_DETECTOR: 'no-such-face-model.onnx' });
    await expect(detectPii(missing, Buffer.alloc(0))).rejects.toThrow(UnavailableError);
    await expect(detectPii(missing, Buffer.alloc(0))).rejects.toThrow(
      /face detector model is not there: .*no-such-face-model\.onnx/,
    );
  });
});
