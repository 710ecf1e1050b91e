import fs from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { latencySummary, type TelemetryBody } from '../core/edge/telemetry';
import { createApiClient, DeviceConflictError, type Assignment } from './client';
import type { AgentConfig } from './config';
import { loadModel, readFrames, sha256Hex, type Frame, type LoadedModel } from './model';

/**
 * The edge agent's loop (docs/edge-rollout.md, The edge agent): it polls for its device's
 * assignment, takes a new artifact only once its SHA-256 matches the one assigned (a mismatch is
 * reported as `verify_failed` and the running model keeps running), runs the model on its frames at
 * most `fps` a second, and reports what it measured every `reportSeconds`. `stop()` ends the loop
 * after the frame in hand; the last figures are reported before it returns.
 */
export function createAgent(config: AgentConfig, log: Logger) {
  const stopping = new AbortController();
  const api = createApiClient({ apiUrl: config.apiUrl, token: config.token, signal: stopping.signal });
  let deviceId = '';
  let model: LoadedModel | null = null;
  /** Artifacts refused or unloadable, by id: the hash assigned then and when to try again. */
  const refused = new Map<string, { sha256: string; retryAt: number }>();
  let window = { frames: 0, errors: 0, samples: [] as number[], boxes: 0, lastError: null as string | null };

  /** Waits, or less when the agent is told to stop. */
  const pause = (ms: number) =>
    sleep(Math.max(0, ms), undefined, { signal: stopping.signal }).catch(() => undefined);

  const post = async (body: Omit<TelemetryBody, 'device_id'>) => {
    await api.telemetry({ device_id: deviceId, ...body });
  };

  /** The figures since the last report; kept for the next one when the API cannot be reached. */
  async function report(): Promise<void> {
    const w = window;
    const body: Omit<TelemetryBody, 'device_id'> = model
      ? {
          artifact_id: model.artifactId,
          model_sha256: model.sha256,
          frames: w.frames,
          errors: w.errors,
          latency_ms: latencySummary(w.samples),
          status: w.frames > 0 && w.errors === w.frames ? 'run_failed' : 'ok',
          detail: {
            input_size: model.inputSize,
            boxes: w.boxes,
            ...(w.lastError ? { error: w.lastError } : {}),
          },
        }
      : {
          artifact_id: null,
          model_sha256: null,
          frames: 0,
          errors: 0,
          latency_ms: null,
          status: 'idle',
          detail: {},
        };
    try {
      await post(body);
      window = { frames: 0, errors: 0, samples: [], boxes: 0, lastError: null };
      log.debug({ status: body.status, frames: body.frames }, 'reported');
    } catch (err) {
      log.warn({ err: String(err) }, 'telemetry not accepted; the figures go with the next report');
    }
  }

  /** A cached artifact whose bytes still hash right, else a fresh download. */
  async function artifactBytes(a: Assignment): Promise<Buffer> {
    const cached = path.join(config.cacheDir, `${a.artifact_id}.onnx`);
    const kept = await fs.readFile(cached).catch(() => null);
    if (kept && sha256Hex(kept) === a.sha256) return kept;
    const bytes = await api.download(a.url);
    if (sha256Hex(bytes) === a.sha256) {
      await fs.mkdir(config.cacheDir, { recursive: true });
      await fs.writeFile(`${cached}.part`, bytes);
      await fs.rename(`${cached}.part`, cached);
    }
    return bytes;
  }

  const refuse = async (
    a: Assignment,
    status: 'verify_failed' | 'load_failed',
    sha: string | null,
    detail: object,
  ) => {
    refused.set(a.artifact_id, { sha256: a.sha256, retryAt: Date.now() + config.retrySeconds * 1000 });
    log.warn({ artifact_id: a.artifact_id, status, ...detail }, 'kept the running model');
    await post({
      artifact_id: a.artifact_id,
      model_sha256: sha,
      frames: 0,
      errors: 0,
      latency_ms: null,
      status,
      detail: { ...detail, running_artifact_id: model?.artifactId ?? null },
    });
  };

  /** Switches to the assigned artifact when it is new, verified and loads; back to idle when none is assigned. */
  async function follow(assignment: Assignment | null, frames: Frame[]): Promise<void> {
    if (!assignment) {
      if (model) {
        await report();
        await model.release();
        model = null;
        log.info('no artifact assigned: idle');
      }
      return;
    }
    if (model?.artifactId === assignment.artifact_id) return;
    const failed = refused.get(assignment.artifact_id);
    if (failed && failed.sha256 === assignment.sha256 && Date.now() < failed.retryAt) return;
    let bytes: Buffer;
    try {
      bytes = await artifactBytes(assignment);
    } catch (err) {
      return refuse(assignment, 'load_failed', null, { stage: 'download', error: String(err) });
    }
    const actual = sha256Hex(bytes);
    if (actual !== assignment.sha256)
      return refuse(assignment, 'verify_failed', actual, {
        expected_sha256: assignment.sha256,
        error: 'the downloaded file does not hash to the assigned SHA-256',
      });
    let next: LoadedModel;
    try {
      next = await loadModel({ artifactId: assignment.artifact_id, sha256: actual }, bytes, {
        threads: config.threads,
        minScore: config.minScore,
        nmsIou: config.nmsIou,
        warmUp: frames[0]!,
      });
    } catch (err) {
      return refuse(assignment, 'load_failed', actual, { stage: 'load', error: String(err) });
    }
    // The figures so far belong to the model being replaced.
    await report();
    await model?.release();
    model = next;
    refused.delete(assignment.artifact_id);
    log.info(
      { artifact_id: next.artifactId, sha256: next.sha256, input_size: next.inputSize },
      'running artifact',
    );
  }

  async function runFrame(frame: Frame): Promise<void> {
    try {
      const { ms, boxes } = await model!.run(frame);
      window.samples.push(ms);
      window.boxes += boxes;
    } catch (err) {
      window.errors++;
      window.lastError = String(err);
    }
    window.frames++;
  }

  return {
    async run(): Promise<void> {
      const frames = await readFrames(config.frames);
      while (!deviceId && !stopping.signal.aborted) {
        try {
          deviceId = (await api.ensureDevice(config)).id;
        } catch (err) {
          if (err instanceof DeviceConflictError) throw err;
          log.warn({ err: String(err) }, 'cannot register the device yet');
          await pause(config.pollSeconds * 1000);
        }
      }
      log.info({ device_id: deviceId, frames: frames.length }, 'device registered');
      let nextPoll = 0;
      let nextReport = Date.now() + config.reportSeconds * 1000;
      let nextFrame = 0;
      let index = 0;
      while (!stopping.signal.aborted) {
        const now = Date.now();
        if (now >= nextPoll) {
          nextPoll = now + config.pollSeconds * 1000;
          try {
            const device = await api.device(config.name);
            await follow(device?.assignment ?? null, frames);
          } catch (err) {
            if (!stopping.signal.aborted) log.warn({ err: String(err) }, 'assignment poll failed');
          }
        }
        if (Date.now() >= nextReport) {
          nextReport = Date.now() + config.reportSeconds * 1000;
          await report();
        }
        if (model && Date.now() >= nextFrame) {
          nextFrame = Date.now() + 1000 / config.fps;
          await runFrame(frames[index++ % frames.length]!);
        }
        await pause(Math.min(nextPoll, nextReport, model ? nextFrame : Infinity) - Date.now());
      }
      if (deviceId) await report();
      await model?.release();
    },
    stop: () => stopping.abort(),
  };
}
