/**
 * The optional AI engine. Nothing is sent unless the provider is configured (a key for the
 * hosted kinds, an endpoint for the local one, in <config_dir>/ai.json) and an analysis is
 * requested; what is sent is the payload of payload.ts, never the capture.
 */
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { writeFileAtomic } from '../atomic-file';
import { configDir } from '../config-dir';
import { CanlabInputError } from '../errors';
import type { AnalysisPayload } from './payload';
import {
  buildRequest,
  isProviderKind,
  PROVIDER_DEFAULTS,
  PROVIDERS,
  responseText,
  type ProviderKind,
} from './providers';

export interface AiConfig {
  provider: ProviderKind;
  model?: string;
  apiKey?: string;
  /** Base URL: required for `ollama`; for hosted kinds a proxy or compatible server. */
  endpoint?: string;
}

/** Not configured: nothing was sent. */
export class AiNotConfiguredError extends Error {
  override name = 'AiNotConfiguredError';
}

export function aiConfigFile(dir = configDir()): string {
  return path.join(dir, 'ai.json');
}

/** The saved configuration, or undefined when the AI engine was never configured. */
export async function loadAiConfig(dir = configDir()): Promise<AiConfig | undefined> {
  const file = aiConfigFile(dir);
  let doc: Record<string, unknown>;
  try {
    doc = JSON.parse(await readFile(file, 'utf8')) as Record<string, unknown>;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new CanlabInputError(file, `not a readable AI configuration: ${(err as Error).message}`);
  }
  return validateAiConfig(doc, file);
}

export function validateAiConfig(doc: Record<string, unknown>, where: string): AiConfig {
  const provider = doc['provider'];
  if (typeof provider !== 'string' || !isProviderKind(provider))
    throw new CanlabInputError(where, `provider must be one of ${PROVIDERS.join(', ')}`);
  const config: AiConfig = { provider };
  for (const field of ['model', 'apiKey', 'endpoint'] as const) {
    const v = doc[field];
    if (v === undefined) continue;
    if (typeof v !== 'string' || v.trim() === '')
      throw new CanlabInputError(where, `${field} must be a non-empty string`);
    config[field] = v.trim();
  }
  if (config.endpoint !== undefined && !/^https?:\/\//.test(config.endpoint))
    throw new CanlabInputError(where, 'endpoint must be an http:// or https:// URL');
  return config;
}

export async function saveAiConfig(config: AiConfig, dir = configDir()): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  // the key is a secret: owner-only
  await writeFileAtomic(aiConfigFile(dir), JSON.stringify(config, null, 2) + '\n', 0o600);
}

/** Why `config` cannot send yet, or undefined when it can. */
export function notReadyReason(config: AiConfig | undefined): string | undefined {
  if (config === undefined)
    return 'the AI engine is not configured (canlab ai configure --provider <kind> ...)';
  if (PROVIDER_DEFAULTS[config.provider].needsKey && config.apiKey === undefined)
    return `no API key is configured for ${config.provider}`;
  if (!PROVIDER_DEFAULTS[config.provider].needsKey && config.endpoint === undefined)
    return `no endpoint is configured for ${config.provider} (e.g. ${PROVIDER_DEFAULTS[config.provider].endpoint})`;
  return undefined;
}

const SYSTEM_PROMPT =
  'You help reverse-engineer a CAN bus. You get per-message statistics (rates, byte change counts, distinct values, moving bits) ' +
  'and a small sample of frames. Suggest what each message likely carries (counters, checksums, signals with start bit, length, ' +
  'byte order and scaling), say how confident you are, and what to record next to confirm it.';

export interface AnalysisRequest {
  payload: AnalysisPayload;
  question?: string;
}

/** Sends one analysis; throws AiNotConfiguredError (before any network use) when not configured. */
export async function analyze(
  config: AiConfig | undefined,
  request: AnalysisRequest,
  fetchImpl: typeof fetch = fetch,
): Promise<string> {
  const reason = notReadyReason(config);
  if (reason !== undefined || config === undefined)
    throw new AiNotConfiguredError(reason ?? 'not configured');
  const defaults = PROVIDER_DEFAULTS[config.provider];
  const user = `${request.question ?? 'What do these messages carry?'}\n\n${JSON.stringify(request.payload)}`;
  const http = buildRequest(
    config.provider,
    config.endpoint ?? defaults.endpoint,
    config.model ?? defaults.model,
    config.apiKey,
    SYSTEM_PROMPT,
    user,
  );
  const response = await fetchImpl(http.url, {
    method: 'POST',
    headers: http.headers,
    body: JSON.stringify(http.body),
    signal: AbortSignal.timeout(120_000),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${config.provider} answered ${response.status}: ${text.slice(0, 300)}`);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(`${config.provider} answered with something that is not JSON`);
  }
  return responseText(config.provider, body);
}
