import type { z } from 'zod';

/**
 * POSTs JSON to a configured model endpoint and validates the answer. One retry after a network
 * error or a 5xx/429 answer; anything else fails at once with a message that names the endpoint.
 */
export async function postJson<S extends z.ZodType>(
  what: string,
  url: string,
  body: unknown,
  opts: { key: string; timeoutSeconds: number; schema: S },
): Promise<z.infer<S>> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (opts.key) headers.authorization = `Bearer ${opts.key}`;
  const payload = JSON.stringify(body);
  let lastError = '';
  for (let attempt = 1; attempt <= 2; attempt++) {
    let res: Response;
    try {
      res = await fetch(url, {
        method: 'POST',
        headers,
        body: payload,
        signal: AbortSignal.timeout(opts.timeoutSeconds * 1000),
      });
    } catch (err) {
      lastError = `${what} at ${url} did not answer: ${(err as Error).message}`;
      continue;
    }
    const text = await res.text();
    if (res.status >= 500 || res.status === 429) {
      lastError = `${what} at ${url} answered ${res.status}: ${text.slice(0, 200)}`;
      continue;
    }
    if (!res.ok) throw new Error(`${what} at ${url} answered ${res.status}: ${text.slice(0, 200)}`);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new Error(`${what} at ${url} answered something that is not JSON: ${text.slice(0, 200)}`);
    }
    const parsed = opts.schema.safeParse(json);
    if (!parsed.success)
      throw new Error(
        `${what} at ${url} answered outside its contract: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
      );
    return parsed.data;
  }
  throw new Error(lastError);
}
