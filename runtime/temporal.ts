import { Client, Connection } from '@temporalio/client';
import type { AppConfig } from '../core/config';

export interface TemporalHandle {
  client: Client;
  connection: Connection;
  /** Asks the server for its system info; rejects when it does not answer. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Connects lazily: `Connection.lazy` lets the API start (and /api/readyz answer 503) while
 * Temporal is still down, and reconnects by itself when it comes back.
 */
export function createTemporalHandle(config: AppConfig['temporal']): TemporalHandle {
  const connection = Connection.lazy({ address: config.address, connectTimeout: '3s' });
  const client = new Client({ connection, namespace: config.namespace });
  return {
    client,
    connection,
    async ping() {
      await connection.withDeadline(Date.now() + 2000, () => connection.workflowService.getSystemInfo({}));
    },
    close: () => connection.close(),
  };
}
