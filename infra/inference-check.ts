import { Client, Connection } from '@temporalio/client';
import { loadConfig } from '../core/config';
import { MODEL_ROLES } from '../activities/detect/inference-runtime';

/** `npm run inference-check`: runs inferenceCheckWorkflow on the running workers and prints each model's report. */
async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const connection = await Connection.connect({ address: config.temporal.address });
  try {
    const client = new Client({ connection, namespace: config.temporal.namespace });
    const checks = await client.workflow.execute('inferenceCheckWorkflow', {
      taskQueue: config.temporal.cpuTaskQueue,
      workflowId: `inference-check-${new Date().toISOString()}`,
      args: [{ models: [...MODEL_ROLES], gpuTaskQueue: config.temporal.gpuTaskQueue }],
    });
    console.log(JSON.stringify(checks, null, 2));
  } finally {
    await connection.close();
  }
}

main().catch((err: unknown) => {
  console.error(`inference-check: ${(err as Error).message}`);
  process.exit(1);
});
