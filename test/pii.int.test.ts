import fs from 'node:fs';
import sharp from 'sharp';
import { detectPii, type PiiDetection } from '../activities/pii/detector';
import { redactFrame } from '../activities/pii/redact';
import { iou, type Box } from '../core/geometry';
import { UnavailableError } from '../core/errors';
import type { PiiRegion } from '../core/pii/regions';
import { skimagePhoto } from '../testkit/media/photos';
import { piiScenes, type PiiScene } from '../testkit/media/pii-scenes';
import { testConfig } from '../testkit/stack';

/**
 * Detection quality of the PII pass, measured on real photographs with the real models
 * (onnxruntime-node): faces from Debian's python3-skimage (the public-domain astronaut.png, and
 * the 100 faces / 100 non-faces of its LFW subset), licence plates rendered onto the vehicles of
 * real street photographs (testkit/media/pii-scenes.ts) and onto other real photographs. The
 * default search (plates on the closed-set detector's vehicle boxes, faces on the whole frame and
 * on person boxes) is held against the whole-frame search of before (`APP_PII__SEARCH=frame`).
 */
const config = testConfig();
const wholeFrame = testConfig({ APP_PII__SEARCH: 'frame', APP_PII__FACE_MAX_SIDE: '960' });
/** The default search with the float text detector that the int8 one is derived from (docs/pii.md "int8"). */
const fp32 = testConfig({ APP_PII__TEXT_PRECISION: 'fp32' });

/** A plate is found when a plate region's centre lies on it and the region spans most of its width. */
const covers = (r: PiiRegion, p: Box): boolean => {
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
};

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

  it('finds at least 95 of the 100 LFW faces (IoU ≥ 0.3 with the tile) at the default whole-frame size, and at most 5 faces among the 100 non-faces', async () => {
    const faces = await lfwSheet(0);
    const onFaces = await detectPii(config, faces.sheet);
    const recall =
      faces.tiles.filter((t) => onFaces.faces.some((f) => iou(f.box, t) >= 0.3)).length / faces.tiles.length;
    console.log(`YuNet recall on LFW faces at ${config.pii.faceMaxSide} px: ${recall}`);
    expect(recall).toBeGreaterThanOrEqual(0.95);
    const nonFaces = await lfwSheet(100);
    expect((await detectPii(config, nonFaces.sheet)).faces.length).toBeLessThanOrEqual(5);
  });
});

describe('plates on vehicles and faces on people (street scenes of real photographs)', () => {
  let scenes: PiiScene[];
  const found: Record<'boxes' | 'frame' | 'fp32', PiiDetection[]> = { boxes: [], frame: [], fp32: [] };
  beforeAll(async () => {
    scenes = await piiScenes(6);
    for (const scene of scenes) {
      found.boxes.push(await detectPii(config, scene.jpeg));
      found.frame.push(await detectPii(wholeFrame, scene.jpeg));
      found.fp32.push(await detectPii(fp32, scene.jpeg));
    }
  });
  const platesFound = (mode: keyof typeof found, minPx = 0) =>
    scenes.flatMap((s, i) =>
      s.plates
        .filter((p) => p.heightPx >= minPx)
        .map((p) => found[mode][i]!.regions.some((r) => covers(r, p.box))),
    );
  const facesFound = (mode: 'boxes' | 'frame') =>
    scenes.flatMap((s, i) => s.faces.map((f) => found[mode][i]!.faces.some((d) => iou(d.box, f.box) >= 0.3)));
  const count = (hits: boolean[]) => hits.filter(Boolean).length;

  it('finds at least the plates the whole-frame pass finds, and four in five of those 16 px or taller', () => {
    const boxes = platesFound('boxes');
    const frame = platesFound('frame');
    console.log(
      `plates on vehicles: boxes ${count(boxes)}/${boxes.length}, whole frame ${count(frame)}/${frame.length}`,
    );
    expect(count(boxes)).toBeGreaterThanOrEqual(count(frame));
    const large = platesFound('boxes', 16);
    expect(count(large) / large.length).toBeGreaterThanOrEqual(0.8);
  });

  it('finds with the int8 text detector every plate the fp32 one it is derived from finds', () => {
    const int8 = platesFound('boxes');
    const float = platesFound('fp32');
    console.log(
      `plates on vehicles: int8 ${count(int8)}/${int8.length}, fp32 ${count(float)}/${float.length}`,
    );
    expect(count(float)).toBeGreaterThan(0);
    expect(float.every((hit, i) => !hit || int8[i])).toBe(true);
  });

  it('finds at least the faces the whole-frame pass at 960 px finds, and nine in ten of all', () => {
    const boxes = facesFound('boxes');
    const frame = facesFound('frame');
    console.log(
      `faces on people: boxes ${count(boxes)}/${boxes.length}, whole frame ${count(frame)}/${frame.length}`,
    );
    expect(count(boxes)).toBeGreaterThanOrEqual(count(frame));
    expect(count(boxes) / boxes.length).toBeGreaterThanOrEqual(0.9);
  });

  it('finds most vehicles with the closed-set detector (a missed one is a plate only the frame search can find)', () => {
    const vehicles = scenes.flatMap((s, i) =>
      s.objects
        .filter((o) => o.className !== 'person')
        .map((o) => found.boxes[i]!.boxes.some((b) => b.className !== 'person' && iou(b.box, o.box) >= 0.5)),
    );
    console.log(`vehicles found by the closed-set detector: ${count(vehicles)}/${vehicles.length}`);
    expect(count(vehicles) / vehicles.length).toBeGreaterThanOrEqual(0.8);
    expect(found.frame.every((f) => f.boxes.length === 0)).toBe(true);
  });

  it('names the closed-set detector among the model versions only when it searched', () => {
    expect(found.boxes[0]!.versions).toEqual({
      face: 'face_detection_yunet.onnx',
      text: 'ch_PP-OCRv4_det_infer.int8.onnx',
      detector: expect.stringMatching(/^yolox_nano\.onnx@[0-9a-f]{12}$/),
    });
    expect(found.frame[0]!.versions).toEqual({
      face: 'face_detection_yunet.onnx',
      text: 'ch_PP-OCRv4_det_infer.int8.onnx',
    });
    expect(found.fp32[0]!.versions.text).toBe('ch_PP-OCRv4_det_infer.onnx');
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

  it('finds in the whole-frame search at least 5 of 6 plates of different sizes on each of three real photographs, and the redaction covers them', async () => {
    let found = 0;
    let total = 0;
    for (const photo of ['coffee.png', 'chelsea.png', 'motorcycle_left.png']) {
      const { image, plates } = await platesOn(photo, [22, 28, 36, 44, 56, 70]);
      // These plates are on no vehicle: only the whole-frame search looks for them.
      const result = await detectPii(wholeFrame, image);
      const hit = (p: Box) => result.regions.some((r) => covers(r, p));
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

  it('refuse the int8 text detector by name, saying how to derive it', async () => {
    const missing = testConfig({ APP_PII__TEXT_DETECTOR_INT8: '/nonexistent/det.int8.onnx' });
    await expect(detectPii(missing, Buffer.alloc(0))).rejects.toThrow(UnavailableError);
    await expect(detectPii(missing, Buffer.alloc(0))).rejects.toThrow(
      /int8 licence-plate text detector model is not there: \/nonexistent\/det\.int8\.onnx .*infra\/pii-models\.sh install/,
    );
  });

  it('refuse the box search without the closed-set detector, by name; the whole-frame search does without it', async () => {
    const photo = fs.readFileSync(skimagePhoto('astronaut.png'));
    const env = { APP_MODELS__CLOSED_SET_DETECTOR: 'no-such-detector.onnx' };
    await expect(detectPii(testConfig(env), photo)).rejects.toThrow(UnavailableError);
    await expect(detectPii(testConfig(env), photo)).rejects.toThrow(
      /model closedSetDetector is not there: .*no-such-detector\.onnx/,
    );
    const found = await detectPii(testConfig({ ...env, APP_PII__SEARCH: 'frame' }), photo);
    expect(found.faces).toHaveLength(1);
  });
});
