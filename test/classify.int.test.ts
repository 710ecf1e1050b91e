import { COCO_TO_ONTOLOGY } from '../core/detect/coco-ontology';
import { createUserWithToken, startTestApi, type TestApi } from '../testkit/api';
import { createTestDatabase, type TestDatabase } from '../testkit/database';
import { testConfig } from '../testkit/stack';
import { createVehicleSession, vehicleFrames, type VehicleFrame } from '../testkit/media/vehicles';

/** POST /api/objects/classify on a real photograph composite, with the real YOLOX model. */

let db: TestDatabase;
let api: TestApi;
let token: string;
let frameId: string;
let frame: VehicleFrame;

beforeAll(async () => {
  db = await createTestDatabase();
  api = await startTestApi(testConfig({ DATABASE_URL: db.url }));
  token = (await createUserWithToken(api.deps, 'annotator')).token;
  [frame] = (await vehicleFrames(1)) as [VehicleFrame];
  frameId = (await createVehicleSession(api.deps, [frame])).frames[0]!.id;
});
afterAll(async () => {
  await api?.close();
  await db?.drop();
});

const classify = (body: unknown, t = token) => api.call('POST', '/api/objects/classify', { token: t, body });

it('names the vehicle in a drawn box, best class first, with ontology ids', async () => {
  const bus = await classify({ frame_id: frameId, box: frame.truth.bus });
  expect(bus.status).toBe(200);
  expect(bus.body.model).toMatch(/^yolox_nano\.onnx@/);
  expect(bus.body.candidates[0]).toMatchObject({
    class_name: COCO_TO_ONTOLOGY.bus,
    class_id: expect.any(Number),
  });
  expect(bus.body.candidates[0].score).toBeGreaterThan(0.3);

  const moto = await classify({ frame_id: frameId, box: frame.truth.motorcycle });
  expect(moto.body.candidates[0].class_name).toBe(COCO_TO_ONTOLOGY.motorcycle);
});

it('suggests nothing for a box around empty road rather than guessing', async () => {
  const w = frame.width;
  const empty = await classify({ frame_id: frameId, box: [w * 0.66, 10, w * 0.98, 120] });
  expect(empty.status).toBe(200);
  expect(empty.body.candidates).toEqual([]);
});

it('answers bad input and unknown frames clearly', async () => {
  expect((await classify({ frame_id: frameId, box: [10, 10, 5, 5] })).status).toBe(422);
  expect((await classify({ frame_id: frameId, box: [1, 2, 3] })).body.errors[0].field).toBe('body.box');
  expect(
    (await classify({ frame_id: '00000000-0000-4000-8000-000000000000', box: [0, 0, 10, 10] })).status,
  ).toBe(404);
});

it('refuses by name when the closed-set model is missing', async () => {
  const noModel = await startTestApi(
    testConfig({ DATABASE_URL: db.url, APP_MODELS__CLOSED_SET_DETECTOR: 'absent.onnx' }),
  );
  try {
    const res = await noModel.call('POST', '/api/objects/classify', {
      token,
      body: { frame_id: frameId, box: frame.truth.bus },
    });
    expect(res.status).toBe(503);
    expect(res.body.detail).toMatch(/closedSetDetector.*absent\.onnx/);
  } finally {
    await noModel.close();
  }
});

it('runs on the CPU even where the auto-label models run on CUDA: never outside the GPU slot', async () => {
  // This machine has no CUDA provider: a classifier that followed APP_MODELS__DEVICE would refuse.
  const cudaDeployment = await startTestApi(testConfig({ DATABASE_URL: db.url, APP_MODELS__DEVICE: 'cuda' }));
  try {
    const res = await cudaDeployment.call('POST', '/api/objects/classify', {
      token,
      body: { frame_id: frameId, box: frame.truth.bus },
    });
    expect(res.status).toBe(200);
    expect(res.body.candidates[0].class_name).toBe(COCO_TO_ONTOLOGY.bus);
  } finally {
    await cudaDeployment.close();
  }
});
