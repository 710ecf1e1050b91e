import { startIngestStack, type IngestStack } from '../testkit/media/harness';
import { createVehicleSession, vehicleFrames } from '../testkit/media/vehicles';

/**
 * GET /api/system/resources on the real stack (PostgreSQL, Temporal, the cpu worker; no gpu
 * worker, so an auto-label waits for the slot): the host's figures, the disks, the work queued and
 * the task queues' workers and backlog (docs/hardening.md).
 */
let stack: IngestStack;

beforeAll(async () => {
  stack = await startIngestStack();
}, 120_000);

afterAll(async () => {
  await stack?.close();
});

it('reports the host, the disks, the GPU slot, the jobs in flight and the task queues', async () => {
  const sessionId = (await createVehicleSession(stack.api.deps, await vehicleFrames(1, { width: 320 })))
    .session.id;
  const started = await stack.api.call('POST', '/api/autolabel/start', {
    token: stack.reviewer,
    body: { session_id: sessionId },
  });
  expect(started.status).toBe(202);
  const res = await stack.api.call('GET', '/api/system/resources', { token: stack.admin });
  expect(res.status).toBe(200);
  const r = res.body;
  expect(r.cpu.cores).toBeGreaterThan(0);
  expect(r.cpu.load_average).toHaveLength(3);
  expect(r.memory.total_bytes).toBeGreaterThan(r.memory.free_bytes);
  expect(r.memory.api_process_rss_bytes).toBeGreaterThan(0);
  const models = r.disks.find((d: { role: string }) => d.role === 'models');
  expect(models.total_bytes).toBeGreaterThan(models.free_bytes);
  expect(r.disks.find((d: { role: string }) => d.role === 'ingest root')).toMatchObject({ path: stack.dir });
  expect(r.gpu_slot).toEqual({ inference_device: 'cpu', held: [] });
  expect(r.jobs_in_flight.autolabel.queued + r.jobs_in_flight.autolabel.running).toBe(1);
  const [cpu, gpu] = r.task_queues;
  expect(cpu).toMatchObject({ name: 'cpu', workflow: { pollers: expect.any(Number) } });
  expect(cpu.workflow.pollers + cpu.activity.pollers).toBeGreaterThan(0);
  // No gpu worker: nobody polls the gpu queue, where the auto-label's activity waits.
  expect(gpu).toMatchObject({ name: 'gpu', activity: { pollers: 0 } });
  await stack.api.call('POST', `/api/jobs/autolabel/${started.body.job_id}/cancel`, {
    token: stack.reviewer,
  });
});

it('is for admins', async () => {
  expect((await stack.api.call('GET', '/api/system/resources', { token: stack.reviewer })).status).toBe(403);
});
