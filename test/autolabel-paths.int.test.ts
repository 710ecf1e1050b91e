import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { MockActivityEnvironment } from '@temporalio/testing';
import sharp from 'sharp';
import { createAutolabelActivities } from '../activities/autolabel';
import { createMaskStore } from '../activities/annotations/masks';
import { iou, type Box } from '../core/geometry';
import { createUserWithToken, startTestApi, type TestApi } from '../testkit/api';
import { createTestDatabase, type TestDatabase } from '../testkit/database';
import { testConfig } from '../testkit/stack';
import { createVehicleSession, vehicleFrames, type VehicleFrame } from '../testkit/media/vehicles';

/**
 * The open-vocabulary detector and the vision-language verifier are configured endpoints; here
 * they are local stub servers on 127.0.0.1 that record what they were sent. The closed-set path,
 * PostgreSQL and MinIO are real. The slot-holding activity runs in Temporal's activity test
 * environment (the workflow around it is tested in autolabel.int.test.ts).
 */
interface Recorded {
  body: any;
  auth: string | undefined;
}

function stubServer(answer: (body: any) => { status: number; json: unknown }) {
  const received: Recorded[] = [];
  const server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (c) => (text += c));
    req.on('end', () => {
      const body = JSON.parse(text);
      received.push({ body, auth: req.headers.authorization });
      const { status, json } = answer(body);
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(json));
    });
  });
  return {
    received,
    server,
    listen: () =>
      new Promise<string>((r) =>
        server.listen(0, '127.0.0.1', () => r(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
      ),
    close: () => new Promise((r) => server.close(r)),
  };
}

let db: TestDatabase;
let api: TestApi;
let frames: VehicleFrame[];
let verifierFails = false;

/** The open-vocabulary stub "sees" the bus where the frame has it, with a mask, and a car on empty road. */
const openVocab = stubServer((body) => {
  const sx = body.width / frames[0]!.width;
  const [x1, y1, x2, y2] = frames[0]!.truth.bus.map((v) => v * sx);
  return {
    status: 200,
    json: {
      model: 'stub-ovd',
      detections: [
        { prompt: 'bus', box: [x1, y1, x2, y2], score: 0.9, polygons: [[x1, y1, x2, y1, x2, y2, x1, y2]] },
        { prompt: 'car', box: [body.width * 0.7, 10, body.width * 0.8, 40], score: 0.5 },
        { prompt: 'traffic light', box: [0, 0, 5, 5], score: 0.1 },
      ],
    },
  };
});

const verifier = stubServer((body) => {
  if (verifierFails) return { status: 500, json: { error: 'overloaded' } };
  const ids = (body.messages[1].content as Array<{ type: string; text?: string }>).flatMap((p) =>
    p.type === 'text' ? [...(p.text ?? '').matchAll(/Object (o\d+):/g)].map((m) => m[1]!) : [],
  );
  const verdicts = ids.map((id) => ({
    id,
    verdict: 'confirm',
    class_name: null,
    confidence: 0.95,
    rationale: 'clearly visible',
  }));
  return {
    status: 200,
    json: {
      model: 'stub-vlm',
      choices: [
        { message: { role: 'assistant', content: '```json\n' + JSON.stringify({ verdicts }) + '\n```' } },
      ],
    },
  };
});

beforeAll(async () => {
  db = await createTestDatabase();
  frames = await vehicleFrames(2, { width: 960, step: 0.05 });
  const [ovUrl, vUrl] = [await openVocab.listen(), await verifier.listen()];
  api = await startTestApi(
    testConfig({
      DATABASE_URL: db.url,
      APP_AUTOLABEL__OPEN_VOCAB_URL: ovUrl,
      APP_AUTOLABEL__VERIFIER_URL: `${vUrl}/v1`,
      APP_AUTOLABEL__VERIFIER_MODEL: 'stub-vlm',
      APP_AUTOLABEL__VERIFIER_KEY: 'k-verify',
    }),
  );
});

afterAll(async () => {
  await api?.close();
  await Promise.all([openVocab.close(), verifier.close()]);
  await db?.drop();
});

async function runSession() {
  const { deps } = api;
  const { session, frames: rows } = await createVehicleSession(deps, frames);
  const a = deps.config.autolabel;
  const job = await deps.db.autolabelJob.create({
    data: {
      sessionId: session.id,
      workflowId: `autolabel-${session.id}`,
      policy: {
        auto_accept_conf: a.autoAcceptConf,
        require_agreement: a.requireAgreement,
        review_low: a.reviewLow,
      },
    },
  });
  await new MockActivityEnvironment().run(
    createAutolabelActivities({
      config: deps.config,
      db: deps.db,
      storage: deps.storage,
      events: deps.events,
    }).autolabelSession,
    { jobId: job.id, sessionId: session.id },
  );
  const objects = await deps.db.annoObject.findMany({
    where: { frame: { sessionId: session.id } },
    include: { class: true, provenance: true, frame: true },
  });
  return { rows, job: await deps.db.autolabelJob.findUniqueOrThrow({ where: { id: job.id } }), objects };
}

const trace = (o: { provenance: Array<{ reasonerTrace: unknown }> }) =>
  o.provenance[0]!.reasonerTrace as { verifier: any; paths_ran: string[]; segmentation?: unknown };

describe('three paths, fused', () => {
  let run: Awaited<ReturnType<typeof runSession>>;
  beforeAll(async () => {
    openVocab.received.length = 0;
    verifier.received.length = 0;
    run = await runSession();
  });

  it('sends the open-vocabulary endpoint each frame once, as a JPEG with the prompt list', async () => {
    expect(openVocab.received).toHaveLength(2);
    for (const { body } of openVocab.received) {
      expect(body.prompts).toEqual(expect.arrayContaining(['bus', 'car', 'traffic light', 'person']));
      const meta = await sharp(Buffer.from(body.image.data, 'base64')).metadata();
      expect([meta.format, meta.width, meta.height]).toEqual(['jpeg', body.width, body.height]);
    }
  });

  it('fuses what both detectors saw into one object, with both confidences, full agreement and the mask in MinIO', async () => {
    const masks = createMaskStore(api.deps.storage);
    for (const f of run.rows) {
      const buses = run.objects.filter((o) => o.frameId === f.id && o.class.name === 'bus');
      expect(buses).toHaveLength(1);
      const bus = buses[0]!;
      const p = bus.provenance[0]!;
      // The segmentation path ran too; the open-vocabulary mask wins and the trace keeps both.
      expect(p.paths).toEqual(['closed_set', 'open_vocab', 'segmentation']);
      expect(trace(bus).segmentation).toMatchObject({ status: 'ran', winner: 'open_vocab' });
      expect(p.agreement).toBe(1);
      expect(Object.keys(p.rawConfidences as object).sort()).toEqual(['closed_set', 'open_vocab']);
      expect(iou(bus.bbox as Box, frames[0]!.truth.bus)).toBeGreaterThan(0.7);
      expect(bus.maskUri).toMatch(/^s3:\/\/masks\/objects\//);
      const doc = await masks.read(bus.maskUri!);
      expect(doc.polygons).toHaveLength(1);
      expect(doc.polygons[0]![2]).toBeCloseTo(frames[0]!.truth.bus[2], 0);
      expect(bus.state).toBe('auto_accept');
    }
    // The car only the open-vocabulary path proposed: half agreement, half weight, too weak to review.
    const car = run.objects.find((o) => o.class.name === 'car')!;
    expect(car.provenance[0]!.paths).toEqual(['open_vocab']);
    expect(car.provenance[0]!.agreement).toBe(0.5);
    expect(car.conf).toBeCloseTo(0.25);
    expect(car.state).toBe('annotate');
  });

  it('asks the verifier about the uncertain objects only, with a crop of each, and folds its verdicts in', () => {
    expect(verifier.received.length).toBeGreaterThan(0);
    const askedInProvenance = run.objects.filter((o) => trace(o).verifier);
    let imagesSent = 0;
    for (const { body, auth } of verifier.received) {
      expect(auth).toBe('Bearer k-verify');
      expect(body.model).toBe('stub-vlm');
      imagesSent += body.messages[1].content.filter((p: { type: string }) => p.type === 'image_url').length;
    }
    expect(imagesSent).toBe(askedInProvenance.length);
    expect(askedInProvenance.length).toBeGreaterThan(0);
    for (const o of askedInProvenance) {
      const v = trace(o).verifier;
      expect(v).toMatchObject({ model: 'stub-vlm', verdict: 'confirm', confidence: 0.95 });
      // It was uncertain when asked: in the review band, below auto-accept.
      expect(v.asked.conf).toBeGreaterThanOrEqual(0.35);
      expect(v.asked.conf).toBeLessThan(0.8);
      expect(o.provenance[0]!.paths).toContain('verifier');
      expect(trace(o).paths_ran).toEqual(['closed_set', 'open_vocab', 'verifier']);
    }
    // Nothing confident or too weak was sent.
    for (const o of run.objects.filter((x) => !trace(x).verifier))
      expect(trace(o).paths_ran).toEqual(['closed_set', 'open_vocab']);
    expect(run.objects.filter((o) => o.class.name === 'bus').every((o) => !trace(o).verifier)).toBe(true);
    expect((run.job.tally as { verifier_asked: number }).verifier_asked).toBe(askedInProvenance.length);
  });

  it('names the model of every path that ran on the job', () => {
    expect(run.job.paths).toEqual({
      closed_set: expect.stringMatching(/^yolox_nano\.onnx/),
      open_vocab: 'stub-ovd',
      verifier: 'stub-vlm',
    });
  });
});

describe('a verifier that fails', () => {
  it('leaves the detectors’ view, flags the objects unverified and records why; nothing is invented', async () => {
    verifierFails = true;
    try {
      const run = await runSession();
      const unverified = run.objects.filter((o) =>
        (o.provenance[0]!.qualityFlags as string[]).includes('unverified'),
      );
      expect(unverified.length).toBeGreaterThan(0);
      for (const o of unverified) {
        expect(o.provenance[0]!.paths).not.toContain('verifier');
        expect(trace(o).verifier).toEqual({
          status: 'failed',
          reason: expect.stringMatching(/vision-language verifier at .* answered 500/),
        });
      }
      expect((run.job.tally as { paths: Record<string, Record<string, number>> }).paths.verifier).toEqual({
        failed: 2,
      });
    } finally {
      verifierFails = false;
    }
  });
});

describe('fusion routes', () => {
  it('consensus re-fuses the given path detections and records it as the newest provenance', async () => {
    const { deps } = api;
    const reviewer = await createUserWithToken(deps, 'reviewer');
    const run = await runSession();
    const bus = run.objects.find((o) => o.class.name === 'bus')!;
    const body = {
      fusion: { path: 'closed_set', bbox: bus.bbox, class_name: 'bus', conf: 0.9 },
      auto_paths: [
        { path: 'closed_set', bbox: bus.bbox, class_name: 'bus', conf: 0.9 },
        { path: 'open_vocab', bbox: bus.bbox.map((v) => v + 2), class_name: 'truck', conf: 0.6 },
        { path: 'verifier', bbox: [0, 0, 5, 5], class_name: 'bus', conf: 0.9 },
      ],
      fusion_run_id: 'run-7',
    };
    const res = await api.call('POST', `/api/fusion/object/${bus.id}/consensus`, {
      token: reviewer.token,
      body,
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      paths: ['closed_set', 'open_vocab'],
      paths_ran: ['closed_set', 'open_vocab', 'verifier'],
      class_name: 'bus',
      class_agrees: true,
      fusion_run_id: 'run-7',
    });
    expect(res.body.agreement).toBeCloseTo(2 / 3);
    expect(res.body.entropy).toBeCloseTo(-(0.6 * Math.log2(0.6) + 0.4 * Math.log2(0.4)));
    const newest = await deps.db.provenance.findFirst({
      where: { objectId: bus.id },
      orderBy: { createdAt: 'desc' },
    });
    expect(newest!.qualityFlags).toEqual(['consensus']);

    // No path near the fused box: nothing measured, so nothing is recorded as if it were.
    const nowhere = await api.call('POST', `/api/fusion/object/${bus.id}/consensus`, {
      token: reviewer.token,
      body: {
        ...body,
        auto_paths: [{ path: 'closed_set', bbox: [0, 0, 5, 5], class_name: 'bus', conf: 0.9 }],
      },
    });
    expect(nowhere.status).toBe(200);
    expect(nowhere.body).toMatchObject({
      agreement: null,
      entropy: null,
      conf: null,
      paths: [],
      class_agrees: false,
    });
    const unmatched = await deps.db.provenance.findFirst({
      where: { objectId: bus.id },
      orderBy: { createdAt: 'desc' },
    });
    expect(unmatched).toMatchObject({ agreement: null, entropy: null });
    expect(unmatched!.qualityFlags).toEqual(['consensus', 'no_path_matches_fusion']);
    expect(
      (
        await api.call('POST', `/api/fusion/object/${bus.id}/consensus`, {
          token: reviewer.token,
          body: { ...body, auto_paths: [] },
        })
      ).status,
    ).toBe(422);
    expect(
      (
        await api.call('POST', '/api/fusion/object/00000000-0000-4000-8000-000000000000/consensus', {
          token: reviewer.token,
          body,
        })
      ).status,
    ).toBe(404);
  });

  it('uncertainty lists what the verifier would be asked under a policy', async () => {
    const annotator = await createUserWithToken(api.deps, 'annotator');
    const run = await runSession();
    const sessionId = run.rows[0]!.sessionId;
    const loose = await api.call('POST', '/api/fusion/uncertainty', {
      token: annotator.token,
      body: { session_id: sessionId, policy: { auto_accept_conf: 0.99, review_low: 0.3 } },
    });
    expect(loose.status).toBe(200);
    expect(loose.body.policy).toEqual({ auto_accept_conf: 0.99, require_agreement: false, review_low: 0.3 });
    const ids = new Set(loose.body.objects.map((o: { object_id: string }) => o.object_id));
    for (const o of run.objects)
      expect(ids.has(o.id)).toBe(
        (o.conf! >= 0.3 && o.conf! < 0.99) || (o.conf! >= 0.99 && o.provenance[0]!.entropy! > 0.5),
      );
    const bad = await api.call('POST', '/api/fusion/uncertainty', {
      token: annotator.token,
      body: { session_id: sessionId, policy: { review_low: 0.9, auto_accept_conf: 0.5 } },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].field).toBe('body.review_low');
  });
});
