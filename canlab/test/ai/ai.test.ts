import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { AiNotConfiguredError, analyze, type AiConfig } from '../../src/ai/engine';
import { buildAnalysisPayload } from '../../src/ai/payload';
import type { ProviderKind } from '../../src/ai/providers';
import type { CanFrame } from '../../src/frame';

interface Recorded {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: any;
}

const ANSWERS: Record<ProviderKind, unknown> = {
  openai: { choices: [{ message: { role: 'assistant', content: 'counter in byte 0' } }] },
  anthropic: { content: [{ type: 'text', text: 'counter in byte 0' }] },
  gemini: { candidates: [{ content: { parts: [{ text: 'counter in byte 0' }] } }] },
  ollama: { message: { role: 'assistant', content: 'counter in byte 0' } },
};

let server: http.Server;
let url: string;
let answer: unknown;
const requests: Recorded[] = [];
beforeAll(async () => {
  server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += c.toString()));
    req.on('end', () => {
      requests.push({ method: req.method!, url: req.url!, headers: req.headers, body: JSON.parse(text) });
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(answer));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => (requests.length = 0));

/** 5000 frames of 3 ids; byte 0 counts. */
function capture(): CanFrame[] {
  return Array.from({ length: 5000 }, (_, i) => ({
    timestamp: 1000 + i * 0.001,
    id: [0x100, 0x200, 0x18daf110][i % 3]!,
    extended: i % 3 === 2,
    remote: false,
    error: false,
    fd: false,
    brs: false,
    esi: false,
    dlc: 4,
    data: Uint8Array.from([i & 0xff, 0x11, 0x22, 0x33]),
    channel: 0,
  }));
}

const SAMPLE = 50;

it.each(['openai', 'anthropic', 'gemini', 'ollama'] as const)(
  '%s: sends statistics and at most N sample frames in the real request shape',
  async (provider) => {
    answer = ANSWERS[provider];
    const payload = await buildAnalysisPayload(capture(), SAMPLE);
    const config: AiConfig = {
      provider,
      endpoint: url,
      ...(provider === 'ollama' ? {} : { apiKey: 'sk-test' }),
    };
    expect(await analyze(config, { payload })).toBe('counter in byte 0');
    expect(requests).toHaveLength(1);
    const req = requests[0]!;
    const expected = {
      openai: { path: '/v1/chat/completions', header: ['authorization', 'Bearer sk-test'] },
      anthropic: { path: '/v1/messages', header: ['x-api-key', 'sk-test'] },
      gemini: {
        path: '/v1beta/models/gemini-1.5-flash:generateContent',
        header: ['x-goog-api-key', 'sk-test'],
      },
      ollama: { path: '/api/chat', header: undefined },
    }[provider];
    expect(req.url).toBe(expected.path);
    if (expected.header) expect(req.headers[expected.header[0]!]).toBe(expected.header[1]);
    else expect(req.headers['authorization']).toBeUndefined();
    const userText: string =
      provider === 'gemini'
        ? req.body.contents[0].parts[0].text
        : provider === 'anthropic'
          ? req.body.messages[0].content
          : req.body.messages[1].content;
    const sent = JSON.parse(userText.slice(userText.indexOf('{')));
    expect(sent.frameCount).toBe(5000);
    expect(sent.messages.map((m: any) => [m.id, m.count])).toEqual([
      ['0x100', 1667],
      ['0x200', 1667],
      ['0x18DAF110x', 1666],
    ]);
    expect(sent.messages[0].byteDistinct).toEqual([256, 1, 1, 1]);
    expect(sent.sample).toHaveLength(SAMPLE);
    expect(sent.sample[0]).toEqual({
      t: expect.any(Number),
      id: expect.stringMatching(/^0x/),
      data: expect.stringMatching(/^[0-9A-F]{2}( [0-9A-F]{2}){3}$/),
    });
    // the whole request is a small fraction of the capture: nowhere near 5000 frames
    expect(JSON.stringify(req.body).length).toBeLessThan(20000);
  },
);

it('sends nothing without a key (hosted) or an endpoint (local), or when never configured', async () => {
  const payload = await buildAnalysisPayload(capture(), SAMPLE);
  for (const config of [
    undefined,
    { provider: 'openai', endpoint: url },
    { provider: 'gemini', endpoint: url },
    { provider: 'ollama' },
  ] as Array<AiConfig | undefined>) {
    await expect(analyze(config, { payload })).rejects.toBeInstanceOf(AiNotConfiguredError);
  }
  expect(requests).toHaveLength(0);
});

it('caps the sample and keeps it in time order', async () => {
  const payload = await buildAnalysisPayload(capture(), 10);
  expect(payload.sample).toHaveLength(10);
  const times = payload.sample.map((s) => s.t);
  expect([...times].sort((a, b) => a - b)).toEqual(times);
  await expect(buildAnalysisPayload(capture(), 5001)).rejects.toThrow(RangeError);
});
