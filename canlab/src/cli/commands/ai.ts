/**
 * `canlab ai status | configure --provider <kind> [--model M] [--key-file F] [--endpoint URL] |
 * analyze <capture> [--samples N] [--question TEXT] [--show-payload]`. Only `analyze` sends, and
 * only once configured.
 */
import { readFile } from 'node:fs/promises';
import {
  aiConfigFile,
  AiNotConfiguredError,
  analyze,
  loadAiConfig,
  notReadyReason,
  saveAiConfig,
  validateAiConfig,
} from '../../ai/engine';
import { buildAnalysisPayload, DEFAULT_SAMPLE_FRAMES } from '../../ai/payload';
import { PROVIDER_DEFAULTS } from '../../ai/providers';
import { CanlabInputError } from '../../errors';
import { readCapture } from '../../formats';
import type { CliRun } from '../command';

export const run: CliRun = async ({ positionals, values }, io) => {
  const [action, capture, ...extra] = positionals;
  if (extra.length > 0) throw new CanlabInputError('ai', `unexpected argument '${extra[0]}'`);
  if (action === 'status') {
    const config = await loadAiConfig();
    const reason = notReadyReason(config);
    io.stdout(
      config === undefined
        ? `not configured (${aiConfigFile()})\n`
        : `${config.provider} ${config.model ?? PROVIDER_DEFAULTS[config.provider].model} at ${config.endpoint ?? PROVIDER_DEFAULTS[config.provider].endpoint}: ${reason ?? 'ready (sends only on canlab ai analyze)'}\n`,
    );
    return 0;
  }
  if (action === 'configure') {
    const doc: Record<string, unknown> = {
      provider: values['provider'],
      model: values['model'],
      endpoint: values['endpoint'],
    };
    if (typeof values['key-file'] === 'string') {
      try {
        doc['apiKey'] = (await readFile(values['key-file'], 'utf8')).trim();
      } catch (err) {
        throw new CanlabInputError(values['key-file'], `cannot read key file: ${(err as Error).message}`);
      }
    }
    const config = validateAiConfig(doc, 'ai configure');
    await saveAiConfig(config);
    io.stdout(
      `saved ${config.provider} settings to ${aiConfigFile()} (mode 0600)${notReadyReason(config) ? `; ${notReadyReason(config)}` : ''}\n`,
    );
    return 0;
  }
  if (action === 'analyze' && capture !== undefined) {
    const samples = values['samples'] === undefined ? DEFAULT_SAMPLE_FRAMES : Number(values['samples']);
    let payload;
    try {
      payload = await buildAnalysisPayload(readCapture(capture), samples);
    } catch (err) {
      if (err instanceof RangeError) throw new CanlabInputError('ai', `--samples: ${err.message}`);
      throw err;
    }
    if (values['show-payload'] === true) io.stdout(JSON.stringify(payload, null, 2) + '\n');
    try {
      const answer = await analyze(await loadAiConfig(), {
        payload,
        ...(typeof values['question'] === 'string' ? { question: values['question'] } : {}),
      });
      io.stdout(answer.endsWith('\n') ? answer : answer + '\n');
    } catch (err) {
      if (err instanceof AiNotConfiguredError)
        throw new CanlabInputError('ai', `${err.message}; nothing was sent`);
      throw new CanlabInputError('ai', (err as Error).message);
    }
    return 0;
  }
  throw new CanlabInputError('ai', 'expects status, configure --provider <kind> ..., or analyze <capture>');
};
