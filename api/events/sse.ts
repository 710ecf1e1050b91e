import type { Request, Response } from 'express';
import type { EventHub, EventStream, StreamEvent } from '../../runtime/event-hub';

/**
 * Serves one server-sent event stream: a `ready` event, the backlog when there is one, then every
 * hub event of `stream` that `accept` lets through, with a heartbeat event so proxies keep the
 * connection and clients can tell a quiet stream from a dead one; until the client leaves, or
 * until an event `endsWith` names.
 */
export function serveEventStream(
  req: Request,
  res: Response,
  opts: {
    hub: EventHub;
    stream: EventStream;
    heartbeatSeconds: number;
    hello: Record<string, unknown>;
    accept?: (event: StreamEvent) => boolean;
    /**
     * Events sent after `ready` and before any live one (a job's persisted history). Live events wait
     * meanwhile and are then offered to `accept`, which may drop those the backlog already held.
     */
    backlog?: () => Promise<Array<Pick<StreamEvent, 'type' | 'data' | 'at'>>>;
    /** The stream ends after sending an event for which this holds (a job's final status). */
    endsWith?: (event: Pick<StreamEvent, 'type' | 'data'>) => boolean;
  },
): void {
  res.status(200).set({
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache, no-transform',
    Connection: 'keep-alive',
    'X-Accel-Buffering': 'no',
  });
  res.flushHeaders();
  let seq = 0;
  const send = (type: string, data: unknown): void => {
    res.write(`id: ${++seq}\nevent: ${type}\ndata: ${JSON.stringify(data)}\n\n`);
  };
  res.write('retry: 5000\n\n');
  send('ready', { stream: opts.stream, ...opts.hello, at: new Date().toISOString() });
  let ended = false;
  const emit = (event: Pick<StreamEvent, 'type' | 'data' | 'at'>) => {
    if (ended) return;
    send(event.type, { ...event.data, at: event.at });
    if (opts.endsWith?.(event)) end();
  };
  const offer = (event: StreamEvent) => {
    if (!opts.accept || opts.accept(event)) emit(event);
  };
  // Subscribed before the backlog is read, so nothing published meanwhile is lost.
  let held: StreamEvent[] | null = opts.backlog ? [] : null;
  const unsubscribe = opts.hub.subscribe(opts.stream, (event) => {
    if (held) held.push(event);
    else offer(event);
  });
  const heartbeat = setInterval(
    () => send('heartbeat', { at: new Date().toISOString() }),
    opts.heartbeatSeconds * 1000,
  );
  const stop = () => {
    ended = true;
    clearInterval(heartbeat);
    unsubscribe();
  };
  const end = () => {
    stop();
    res.end();
  };
  req.on('close', stop);
  opts.backlog?.().then(
    (events) => {
      for (const e of events) emit(e);
      const live = held ?? [];
      held = null;
      for (const e of live) offer(e);
    },
    (err: Error) => {
      send('error', { detail: `the stream's history could not be read: ${err.message}` });
      end();
    },
  );
}
