import pino from 'pino';
import { createAgent } from './agent';
import { loadAgentConfig } from './config';

/**
 * The edge agent (docs/edge-rollout.md): `npm run edge-agent -- --api URL --name NAME --target
 * TARGET --frames DIR`, token in EDGE_AGENT_TOKEN. It imports only core/ and npm packages, so it
 * runs on a device with nothing of the platform but this folder, core/ and node_modules.
 * SIGTERM or SIGINT: the frame in hand finishes, the last figures are reported, the model is
 * released, exit 0.
 */
async function main(): Promise<void> {
  const config = loadAgentConfig(process.argv.slice(2), process.env);
  const log = pino({ level: config.logLevel, base: { agent: config.name } });
  const agent = createAgent(config, log);
  for (const signal of ['SIGTERM', 'SIGINT'] as const)
    process.once(signal, () => {
      log.info({ signal }, 'stopping');
      agent.stop();
    });
  await agent.run();
  log.info('stopped');
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(`edge-agent: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
