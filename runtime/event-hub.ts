import { EventEmitter } from 'node:events';
import pg from 'pg';
import type { Logger } from 'pino';

/**
 * Fans events out to every API process through PostgreSQL LISTEN/NOTIFY, so an SSE client
 * connected to one process sees events published by any process or worker.
 */
export const EVENT_STREAMS = ['system', 'jobs', 'notifications', 'training'] as const;
export type EventStream = (typeof EVENT_STREAMS)[number];

export interface StreamEvent {
  stream: EventStream;
  /** SSE event name, e.g. `job.progress`. */
  type: string;
  data: Record<string, unknown>;
  at: string;
}

/** The NOTIFY channel every hub listens on. */
export const EVENT_HUB_CHANNEL = 'drivelab_events';
/** NOTIFY payloads are capped at 8000 bytes by PostgreSQL. */
export const MAX_EVENT_BYTES = 7900;

/**
 * An event as the hub relays it. Besides `publish`, a transaction may send it itself with
 * `pg_notify(EVENT_HUB_CHANNEL, …)`: PostgreSQL delivers it only when the transaction commits.
 */
export const encodeStreamEvent = (stream: EventStream, type: string, data: Record<string, unknown>): string =>
  JSON.stringify({ stream, type, data, at: new Date().toISOString() } satisfies StreamEvent);

export interface EventHub {
  publish(stream: EventStream, type: string, data: Record<string, unknown>): Promise<void>;
  subscribe(stream: EventStream, listener: (event: StreamEvent) => void): () => void;
  close(): Promise<void>;
}

export async function createEventHub(databaseUrl: string, logger: Logger): Promise<EventHub> {
  const emitter = new EventEmitter();
  emitter.setMaxListeners(0);
  const listener = new pg.Client({ connectionString: databaseUrl });
  const publisher = new pg.Pool({ connectionString: databaseUrl, max: 2 });
  listener.on('error', (err) => logger.error({ err }, 'event hub listener failed'));
  listener.on('notification', (msg) => {
    if (msg.channel !== EVENT_HUB_CHANNEL || !msg.payload) return;
    try {
      const event = JSON.parse(msg.payload) as StreamEvent;
      emitter.emit(event.stream, event);
    } catch (err) {
      logger.warn({ err }, 'dropping malformed event');
    }
  });
  await listener.connect();
  await listener.query(`LISTEN ${EVENT_HUB_CHANNEL}`);
  return {
    async publish(stream, type, data) {
      const payload = encodeStreamEvent(stream, type, data);
      if (Buffer.byteLength(payload) > MAX_EVENT_BYTES)
        throw new Error(`event ${type} is too large for the event hub`);
      await publisher.query('SELECT pg_notify($1, $2)', [EVENT_HUB_CHANNEL, payload]);
    },
    subscribe(stream, fn) {
      emitter.on(stream, fn);
      return () => emitter.off(stream, fn);
    },
    async close() {
      emitter.removeAllListeners();
      await listener.end().catch(() => undefined);
      await publisher.end().catch(() => undefined);
    },
  };
}
