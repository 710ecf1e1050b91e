import type { Request, Response } from 'express';
import type { EventHub, EventStream, StreamEvent } from '../../runtime/event-hub';

/**
 * Serves one server-sent event stream: a `ready` event, then every hub event of `stream` that
 * `accept` lets through, with a heartbeat event so proxies keep the connection and clients can
 * tell a quiet stream from a dead one.
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
  const unsubscribe = opts.hub.subscribe(opts.stream, (event) => {
    if (!opts.accept || opts.accept(event)) send(event.type, { ...event.data, at: event.at });
  });
  const heartbeat = setInterval(
    () => send('heartbeat', { at: new Date().toISOString() }),
    opts.heartbeatSeconds * 1000,
  );
  req.on('close', () => {
    clearInterval(heartbeat);
    unsubscribe();
  });
}
