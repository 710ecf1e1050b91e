/** One server-sent event as the client reads it. */
export interface SseEvent {
  event: string;
  data: unknown;
}

export interface EventStreamReader {
  status: number;
  headers: Headers;
  /** Everything read so far, as sent. */
  text(): string;
  /** The events read so far, parsed (`data` as JSON where it is JSON). */
  events(): SseEvent[];
  /** Reads until `done` holds for what was read, the stream ends, or `timeoutMs` passes; then closes. */
  readUntil(done: (events: SseEvent[], text: string) => boolean, timeoutMs?: number): Promise<SseEvent[]>;
  close(): void;
}

function parseEvents(text: string): SseEvent[] {
  const events: SseEvent[] = [];
  for (const block of text.split('\n\n')) {
    const event = /^event: (.*)$/m.exec(block)?.[1];
    const data = /^data: (.*)$/m.exec(block)?.[1];
    if (event === undefined || data === undefined) continue;
    let parsed: unknown = data;
    try {
      parsed = JSON.parse(data);
    } catch {
      // plain text data
    }
    events.push({ event, data: parsed });
  }
  return events;
}

/** Opens an SSE stream of the API with a bearer header (or `?token=` when `queryToken`). */
export async function openEventStream(
  baseUrl: string,
  path: string,
  token: string,
  opts: { queryToken?: boolean } = {},
): Promise<EventStreamReader> {
  const controller = new AbortController();
  const url = opts.queryToken ? `${baseUrl}${path}?token=${encodeURIComponent(token)}` : `${baseUrl}${path}`;
  const res = await fetch(url, {
    signal: controller.signal,
    headers: opts.queryToken ? {} : { authorization: `Bearer ${token}` },
  });
  let text = '';
  const reader = res.body?.getReader();
  const decoder = new TextDecoder();
  return {
    status: res.status,
    headers: res.headers,
    text: () => text,
    events: () => parseEvents(text),
    async readUntil(done, timeoutMs = 60_000) {
      const timer = setTimeout(() => controller.abort(), timeoutMs);
      try {
        while (reader && !done(parseEvents(text), text)) {
          const { value, done: ended } = await reader.read();
          if (ended) break;
          text += decoder.decode(value, { stream: true });
        }
      } catch {
        // aborted: by the timeout or by close()
      } finally {
        clearTimeout(timer);
        controller.abort();
      }
      return parseEvents(text);
    },
    close: () => controller.abort(),
  };
}
