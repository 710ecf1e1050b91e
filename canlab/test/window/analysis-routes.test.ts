/**
 * The window's analysis routes over HTTP: POST /ui/dbc (a DBC's bytes join the signal list),
 * GET /ui/series (decoded, decimated time series of a defined signal or a candidate field),
 * GET /ui/heatmap (flip and set rates per bit) and the bits that /ui/intelligence adds to findings.
 */
import { fieldBits } from '../../src/analysis/bits';
import type { CanFrame } from '../../src/frame';
import { createRestServer, type RestServer } from '../../src/rest/server';
import { Workspace } from '../../src/workspace/workspace';
import { frame } from './helpers';

const TOKEN = 'analysis-routes-token-51d0';

/** 0x100: counter in byte 0, temperature (byte 1, 0.5 °C per bit, -40 offset) rising then falling. */
function bus(count: number, from = 0): CanFrame[] {
  return Array.from({ length: count }, (_, k) => {
    const i = from + k;
    return frame(i * 0.01, 0x100, [i & 0xff, 100 + Math.round(50 * Math.sin(i / 100)), 0x5a, 0]);
  });
}

/** A DBC written as a Windows tool writes it: cp1252, so its degree sign is the single byte 0xB0. */
const DBC = Buffer.from(
  [
    'VERSION ""',
    '',
    'BU_: ECU',
    '',
    'BO_ 256 ENGINE: 4 ECU',
    ' SG_ COUNTER : 0|8@1+ (1,0) [0|255] "" ECU',
    ' SG_ TEMP : 8|8@1+ (0.5,-40) [-40|87.5] "\u00b0C" ECU',
    '',
    'CM_ SG_ 256 TEMP "Temp\u00e9rature";',
    '',
  ].join('\r\n'),
  'latin1',
);

interface Answer {
  status: number;
  body: any;
}

describe('the window analysis routes', () => {
  let ws: Workspace;
  let server: RestServer;

  async function request(method: 'GET' | 'POST', path: string, body?: Buffer | string): Promise<Answer> {
    const res = await fetch(server.url + path, {
      method,
      headers: {
        'X-API-Token': TOKEN,
        ...(body === undefined ? {} : { 'Content-Type': 'application/octet-stream' }),
      },
      body,
    });
    return { status: res.status, body: await res.json() };
  }

  beforeEach(async () => {
    ws = new Workspace();
    ws.appendFrames(bus(2000));
    server = await createRestServer({ workspace: ws, token: TOKEN, allowInject: false, port: 0 });
  });
  afterEach(() => server.close());

  it("POST /ui/dbc defines every signal of the file's bytes (cp1252 too) with source dbc", async () => {
    const answer = await request('POST', '/ui/dbc?name=/some/where/engine.dbc', DBC);
    expect(answer).toEqual({
      status: 200,
      body: {
        dbc: {
          file: 'engine.dbc',
          messages: 1,
          signals: 2,
          skipped: [],
          messageNames: { '0x100': 'ENGINE' },
        },
      },
    });
    expect(ws.signals().map((d) => [d.signal.name, d.signal.unit, d.signal.comment])).toEqual([
      ['COUNTER', '', undefined],
      ['TEMP', '°C', 'Température'],
    ]);
    expect(ws.history().undo.map((s) => s.source)).toEqual(['dbc', 'dbc']);
    expect((await request('GET', '/ui/state')).body.dbc.file).toBe('engine.dbc');
  });

  it('POST /ui/dbc refuses a broken or empty file, naming file and line, and defines nothing', async () => {
    const broken = 'VERSION ""\n\nBO_ 256 X: 8 Y\n SG_ A : 0|8@1+ (1,0 [0|0] "" Y\n';
    expect(await request('POST', '/ui/dbc?name=broken.dbc', broken)).toEqual({
      status: 400,
      body: {
        error: 'bad_request',
        message: "broken.dbc:4: malformed SG_ line: expected ')' after the offset, found '['",
      },
    });
    expect(await request('POST', '/ui/dbc', '')).toEqual({
      status: 400,
      body: { error: 'bad_request', message: 'body: window.dbc is empty', field: 'body' },
    });
    expect(ws.signals()).toEqual([]);
  });

  it('GET /ui/series decodes a defined signal, min/max per column, within from..to', async () => {
    await request('POST', '/ui/dbc?name=engine.dbc', DBC);
    const whole = await request('GET', '/ui/series?messageId=0x100&name=TEMP&width=100');
    expect(whole.status).toBe(200);
    const temps = bus(2000).map((f) => f.data[1]! * 0.5 - 40);
    expect(whole.body).toMatchObject({
      messageId: '0x100',
      extended: false,
      name: 'TEMP',
      unit: '°C',
      total: 2000,
      start: 0,
      end: 1999 * 0.01,
      from: 0,
      to: 1999 * 0.01,
      width: 100,
      inView: 2000,
      decimated: true,
    });
    expect(whole.body.t.length).toBeLessThanOrEqual(400);
    expect(Math.max(...whole.body.v)).toBe(Math.max(...temps));
    expect(Math.min(...whole.body.v)).toBe(Math.min(...temps));

    // Zoomed to 1 s on 1000 columns: every sample, plus one either side.
    const zoomed = await request('GET', '/ui/series?messageId=0x100&name=TEMP&from=5&to=6&width=1000');
    const times = bus(2000).map((f) => f.timestamp);
    const first = times.findIndex((t) => t >= 5);
    const last = times.findLastIndex((t) => t <= 6);
    expect(zoomed.body).toMatchObject({ inView: last - first + 1, decimated: false });
    expect(zoomed.body.t).toEqual(times.slice(first - 1, last + 2));
    expect(zoomed.body.v).toEqual(temps.slice(first - 1, last + 2));
  });

  it('GET /ui/series decodes a candidate field as the detector describes it', async () => {
    const counter = await request(
      'GET',
      '/ui/series?messageId=0x100&startBit=0&length=8&from=0&to=2.555&width=4000',
    );
    expect(counter.status).toBe(200);
    expect(counter.body).toMatchObject({ name: null, unit: '', total: 2000, decimated: false });
    expect(counter.body.v.slice(0, 256)).toEqual(Array.from({ length: 256 }, (_, i) => i));
    // Signed and big-endian: 0x5A00 read from byte 2's MSB over 16 bits.
    const signed = await request(
      'GET',
      '/ui/series?messageId=0x100&startBit=23&length=16&byteOrder=big_endian&signed=true&width=10',
    );
    expect(new Set(signed.body.v)).toEqual(new Set([0x5a00]));
  });

  it('GET /ui/series follows the workspace: new frames and a redefined signal are decoded afresh', async () => {
    await request('POST', '/ui/dbc?name=engine.dbc', DBC);
    expect((await request('GET', '/ui/series?messageId=0x100&name=COUNTER')).body.total).toBe(2000);
    ws.appendFrames(bus(10, 2000));
    expect((await request('GET', '/ui/series?messageId=0x100&name=COUNTER')).body.total).toBe(2010);
    const counter = ws.signals()[0]!;
    ws.defineSignal({ ...counter, signal: { ...counter.signal, factor: 2 } }, 'window');
    const doubled = await request('GET', '/ui/series?messageId=0x100&name=COUNTER&from=0&to=0.5');
    expect(doubled.body.v.slice(0, 5)).toEqual([0, 2, 4, 6, 8]);
  });

  it('GET /ui/series refuses what it cannot plot, naming the field', async () => {
    const refusal = async (query: string): Promise<[number, string]> => {
      const { status, body } = await request('GET', `/ui/series?${query}`);
      return [status, body.field];
    };
    await expect(refusal('name=TEMP')).resolves.toEqual([400, 'messageId']);
    await expect(refusal('messageId=0x100&name=TEMP')).resolves.toEqual([400, 'name']);
    await expect(refusal('messageId=0x100')).resolves.toEqual([400, 'startBit']);
    await expect(refusal('messageId=0x100&startBit=500&length=64')).resolves.toEqual([400, 'startBit']);
    await expect(refusal('messageId=0x100&startBit=0&length=8&width=0')).resolves.toEqual([400, 'width']);
    await expect(refusal('messageId=0x100&startBit=0&length=8&from=3&to=3')).resolves.toEqual([400, 'to']);
    await expect(refusal('messageId=0x100&startBit=0&length=8&from=soon')).resolves.toEqual([400, 'from']);
    await expect(refusal('messageId=0x800&startBit=0&length=8&extended=false')).resolves.toEqual([
      400,
      'messageId',
    ]);
  });

  it("GET /ui/heatmap answers each bit's flip and set rate and the defined signals' bits", async () => {
    await request('POST', '/ui/dbc?name=engine.dbc', DBC);
    const { status, body } = await request('GET', '/ui/heatmap?messageId=0x100');
    expect(status).toBe(200);
    expect(body).toMatchObject({ messageId: '0x100', extended: false, frames: 2000, length: 4 });
    expect(body.flipRate.slice(0, 8)).toEqual(
      Array.from({ length: 8 }, (_, k) => Math.floor(1999 / 2 ** k) / 1999),
    );
    expect(body.setRate.slice(16, 24)).toEqual([0, 1, 0, 1, 1, 0, 1, 0]);
    expect(body.flipRate.slice(16)).toEqual(new Array(16).fill(0));
    expect(body.signals).toEqual([
      { name: 'COUNTER', bits: [0, 1, 2, 3, 4, 5, 6, 7] },
      { name: 'TEMP', bits: [8, 9, 10, 11, 12, 13, 14, 15] },
    ]);
  });

  it('GET /ui/intelligence gives every finding the bits it claims', async () => {
    const { body } = await request('GET', '/ui/intelligence');
    const findings = body.items.filter((i: any) => i.kind === 'finding');
    expect(findings.length).toBeGreaterThan(0);
    for (const item of findings) expect(item.bits).toEqual(fieldBits(item.detail.field));
    expect(findings.find((i: any) => i.detail.kind === 'counter').bits).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });
});
