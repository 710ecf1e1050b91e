import sharp from 'sharp';
import type { Box } from '../core/geometry';
import { useApiForFile } from '../testkit/api';
import { createVehicleSession, vehicleFrames, type VehicleFrame } from '../testkit/media/vehicles';

/**
 * OCR on the real stack (PostgreSQL, MinIO, onnxruntime with the PP-OCRv4 models). Plates are
 * rendered (SVG text on a white plate rectangle) onto the real bus photograph of the vehicle
 * frames, so their strings are known by construction; the bus itself carries real text (the
 * EMT Madrid livery's "cero emisiones", read by eye from the photograph).
 */
const ctx = useApiForFile();

const PLATES = [
  'WB 02 AK 7781',
  'GJ01 RX 5521',
  'TN 09 BZ 6060',
  'AB12 CDE',
  '8KJF442',
  'KA 05 MN 4321',
  'B-MW 2047',
  '7ABC123',
  'DL3C AB 1234',
  'HR26 DK 8337',
  'MH12 PQ 9090',
];
const PLATE_W = 180;
const PLATE_H = 38;

const plateSvg = (text: string) =>
  Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${PLATE_W}" height="${PLATE_H}"><rect x="1" y="1" width="${PLATE_W - 2}" height="${PLATE_H - 2}" rx="3" fill="white" stroke="black" stroke-width="2"/><text x="${PLATE_W / 2}" y="${PLATE_H * 0.75}" font-family="DejaVu Sans Condensed" font-weight="bold" font-size="${PLATE_H * 0.6}" text-anchor="middle">${text}</text></svg>`,
  );

const normalize = (s: string) => s.toUpperCase().replace(/[\s\-.]/g, '');

let base: VehicleFrame;
/** Where the plate goes: the bus's lower front, below the windscreen. */
let plateBox: Box;

async function plateFrames() {
  const frames: VehicleFrame[] = [];
  for (const text of PLATES) {
    const jpeg = await sharp(base.jpeg)
      .composite([{ input: plateSvg(text), left: plateBox[0], top: plateBox[1] }])
      .jpeg({ quality: 90 })
      .toBuffer();
    frames.push({ ...base, jpeg });
  }
  return createVehicleSession(ctx.api.deps, frames);
}

beforeAll(async () => {
  [base] = (await vehicleFrames(1)) as [VehicleFrame];
  const [bx1, , , by2] = base.truth.bus;
  plateBox = [Math.round(bx1 + 300), Math.round(by2 - 250), 0, 0];
  plateBox[2] = plateBox[0] + PLATE_W;
  plateBox[3] = plateBox[1] + PLATE_H;
});

test('reads rendered plates in a region exactly for most, marking them plate-shaped', async () => {
  const { frames } = await plateFrames();
  const margin: Box = [plateBox[0] - 40, plateBox[1] - 30, plateBox[2] + 40, plateBox[3] + 30];
  let exact = 0;
  const reads: string[] = [];
  for (const [i, frame] of frames.entries()) {
    const res = await ctx.api.call('POST', '/api/ocr/region', {
      token: ctx.token.reviewer,
      body: { frame_id: frame.id, box: margin },
    });
    expect(res.status).toBe(200);
    const plate = res.body.lines.find((l: { plate: boolean }) => l.plate);
    reads.push(`${PLATES[i]} → ${plate?.plate_text ?? '(none)'}`);
    if (plate?.plate_text === normalize(PLATES[i]!)) {
      exact++;
      expect(plate.confidence).toBeGreaterThan(0.5);
      // The line lies on the rendered plate.
      expect(plate.box[0]).toBeGreaterThanOrEqual(plateBox[0] - 10);
      expect(plate.box[2]).toBeLessThanOrEqual(plateBox[2] + 10);
    }
  }
  console.log(`rendered plates read exactly: ${exact}/${PLATES.length}\n${reads.join('\n')}`);
  // Measured 11/11 when written; 9/11 leaves room for onnxruntime and libvips differences.
  expect(exact).toBeGreaterThanOrEqual(9);
});

test("reads the plate and the bus's real livery text over the frame's vehicle boxes", async () => {
  const { frames } = await createVehicleSession(ctx.api.deps, [
    {
      ...base,
      jpeg: await sharp(base.jpeg)
        .composite([{ input: plateSvg(PLATES[7]!), left: plateBox[0], top: plateBox[1] }])
        .jpeg({ quality: 90 })
        .toBuffer(),
    },
  ]);
  const db = ctx.api.deps.db;
  const classId = async (name: string) => (await db.ontologyClass.findUniqueOrThrow({ where: { name } })).id;
  const frame = frames[0]!;
  await db.annoObject.createMany({
    data: [
      {
        frameId: frame.id,
        bbox: base.truth.bus,
        classId: await classId('bus'),
        source: 'human',
        state: 'accepted',
      },
      {
        frameId: frame.id,
        bbox: base.truth.motorcycle,
        classId: await classId('motorcycle'),
        source: 'human',
        state: 'accepted',
      },
      {
        frameId: frame.id,
        bbox: [10, 10, 200, 200],
        classId: await classId('pole'),
        source: 'human',
        state: 'accepted',
      },
    ],
  });
  const res = await ctx.api.call('POST', '/api/ocr/run', {
    token: ctx.token.reviewer,
    body: { frame_id: frame.id },
  });
  expect(res.status).toBe(200);
  // The pole is no vehicle.
  expect(res.body.vehicles_on_frame).toBe(2);
  const bus = res.body.vehicles.find((v: { class: string }) => v.class === 'bus');
  expect(bus.plates).toContain(normalize(PLATES[7]!));
  const texts = bus.lines.map((l: { text: string }) => l.text.toLowerCase());
  expect(texts.some((t: string) => t.startsWith('cero'))).toBe(true);
  expect(bus.lines.filter((l: { plate: boolean }) => l.plate)).toHaveLength(1);
});

test('refuses by rule: unknown frame 404, a box off the frame 422, an annotator 403', async () => {
  const { frames } = await createVehicleSession(ctx.api.deps, [base]);
  const missing = await ctx.api.call('POST', '/api/ocr/region', {
    token: ctx.token.reviewer,
    body: { frame_id: '00000000-0000-4000-8000-000000000000', box: [0, 0, 10, 10] },
  });
  expect(missing.status).toBe(404);
  const off = await ctx.api.call('POST', '/api/ocr/region', {
    token: ctx.token.reviewer,
    body: { frame_id: frames[0]!.id, box: [5000, 5000, 5100, 5100] },
  });
  expect(off.status).toBe(422);
  expect(off.body.detail).toMatch(/inside the 1280×720 frame/);
  const inverted = await ctx.api.call('POST', '/api/ocr/region', {
    token: ctx.token.reviewer,
    body: { frame_id: frames[0]!.id, box: [100, 100, 50, 50] },
  });
  expect([400, 422]).toContain(inverted.status);
  const annotator = await ctx.api.call('POST', '/api/ocr/run', {
    token: ctx.token.annotator,
    body: { frame_id: frames[0]!.id },
  });
  expect(annotator.status).toBe(403);
});
