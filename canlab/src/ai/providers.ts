/**
 * The four provider kinds and their real request shapes. Three hosted (a key is required):
 * `openai` (Chat Completions), `anthropic` (Messages), `gemini` (generateContent); one local
 * with no key: `ollama` (an Ollama-compatible /api/chat endpoint, 127.0.0.1:11434 by default).
 */
export const PROVIDERS = ['openai', 'anthropic', 'gemini', 'ollama'] as const;
export type ProviderKind = (typeof PROVIDERS)[number];

export function isProviderKind(value: string): value is ProviderKind {
  return (PROVIDERS as readonly string[]).includes(value);
}

export interface ProviderDefaults {
  endpoint: string;
  model: string;
  needsKey: boolean;
}

export const PROVIDER_DEFAULTS: Readonly<Record<ProviderKind, ProviderDefaults>> = {
  openai: { endpoint: 'https://api.openai.com', model: 'gpt-4o-mini', needsKey: true },
  anthropic: { endpoint: 'https://api.anthropic.com', model: 'claude-3-5-haiku-latest', needsKey: true },
  gemini: {
    endpoint: 'https://generativelanguage.googleapis.com',
    model: 'gemini-1.5-flash',
    needsKey: true,
  },
  ollama: { endpoint: 'http://127.0.0.1:11434', model: 'llama3.1', needsKey: false },
};

export interface ProviderRequest {
  url: string;
  headers: Record<string, string>;
  body: unknown;
}

/** The HTTP request that asks `kind` for a completion of `system` + `user`. */
export function buildRequest(
  kind: ProviderKind,
  endpoint: string,
  model: string,
  key: string | undefined,
  system: string,
  user: string,
): ProviderRequest {
  const base = endpoint.replace(/\/+$/, '');
  const json = { 'content-type': 'application/json' };
  switch (kind) {
    case 'openai':
      return {
        url: `${base}/v1/chat/completions`,
        headers: { ...json, authorization: `Bearer ${key}` },
        body: {
          model,
          messages: [
            { role: 'system', content: system },
            { role: 'user', content: user },
          ],
        },
      };
    case 'anthropic':
      return {
        url: `${base}/v1/messages`,
        headers: { ...json, 'x-api-key': key!, 'anthropic-version': '2023-06-01' },
        body: { model, max_tokens: 2048, system, messages: [{ role: 'user', content: user }] },
      };
    case 'gemini':
      return {
        url: `${base}/v1beta/models/${encodeURIComponent(model)}:generateContent`,
        headers: { ...json, 'x-goog-api-key': key! },
        body: {
          systemInstruction: { parts: [{ text: system }] },
          contents: [{ role: 'user', parts: [{ text: user }] }],
        },
      };
    case 'ollama':
      return {
        url: `${base}/api/chat`,
        headers: json,
        body: {
          model,
          stream: false,
          messages: [
            { role: 'system', content: system },
            { role: 'user', content: user },
          ],
        },
      };
  }
}

/** The answer text from each kind's response body; throws when the shape is not the expected one. */
export function responseText(kind: ProviderKind, body: unknown): string {
  const b = body as Record<string, unknown> | null;
  let text: unknown;
  switch (kind) {
    case 'openai':
      text = (b?.['choices'] as Array<{ message?: { content?: unknown } }> | undefined)?.[0]?.message
        ?.content;
      break;
    case 'anthropic':
      text = (b?.['content'] as Array<{ type?: string; text?: unknown }> | undefined)
        ?.filter((c) => c.type === 'text')
        .map((c) => c.text)
        .join('');
      break;
    case 'gemini':
      text = (
        b?.['candidates'] as Array<{ content?: { parts?: Array<{ text?: unknown }> } }> | undefined
      )?.[0]?.content?.parts
        ?.map((p) => p.text)
        .join('');
      break;
    case 'ollama':
      text = (b?.['message'] as { content?: unknown } | undefined)?.content;
      break;
  }
  if (typeof text !== 'string') throw new Error(`${kind} answered without the expected text field`);
  return text;
}
