/**
 * The tool-server scenario every transport runs (in-process Streamable HTTP, the stdio launcher,
 * the --attach bridge): every one of the 29 tools called with valid arguments on the generated
 * scene, asserting what it found, then every tool with invalid arguments, asserting a clear tool
 * error and a server that keeps answering.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { fieldBits, toSigned } from '../../src/analysis/bits';
import { extractRaw } from '../../src/dbc/codec';
import { TOOL_NAMES } from '../../src/mcp/tools';
import { BUTTON, CALIBRATION, REPLAYED_BLOCK_LENGTH, VIN, type SceneFiles } from './scene';

// Tool results are JSON read loosely, as in the test files (where the lint config allows `any`).
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

function textOf(result: Json): string {
  expect(Array.isArray(result.content)).toBe(true);
  expect(result.content[0].type).toBe('text');
  return result.content[0].text as string;
}

/** Calls a tool that must succeed; returns its JSON result. */
export async function call(client: Client, name: string, args: Record<string, unknown> = {}): Promise<Json> {
  const result: Json = await client.callTool({ name, arguments: args });
  if (result.isError) throw new Error(`${name} failed: ${textOf(result)}`);
  return JSON.parse(textOf(result));
}

/** Calls a tool that must refuse; returns the error text. */
export async function callError(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<string> {
  const result: Json = await client.callTool({ name, arguments: args });
  expect({ name, args, isError: result.isError }).toEqual({ name, args, isError: true });
  const text = textOf(result);
  expect(text.length).toBeGreaterThan(0);
  return text;
}

export async function expectAllTools(client: Client): Promise<void> {
  const { tools } = await client.listTools();
  expect(tools).toHaveLength(29);
  expect(tools.map((t) => t.name)).toEqual([...TOOL_NAMES]);
  for (const t of tools) {
    expect(t.description?.length).toBeGreaterThan(20);
    expect(t.inputSchema.type).toBe('object');
  }
}

const bitsOf = (field: Json): number[] => fieldBits(field).sort((a, b) => a - b);

/** Every tool with valid arguments, in an analyst's order. */
export async function exerciseEveryTool(client: Client, scene: SceneFiles): Promise<Set<string>> {
  const called = new Set<string>();
  const run = async (name: string, args: Record<string, unknown> = {}): Promise<Json> => {
    called.add(name);
    return call(client, name, args);
  };

  expect((await run('status')).status).toMatchObject({ connection: 'empty', frameCount: 0, signalCount: 0 });
  const loaded = await run('load_capture', { path: scene.capture });
  expect(loaded.status).toMatchObject({
    connection: 'loaded',
    source: scene.capture,
    frameCount: 3525,
    idCount: 9,
  });

  const ids = await run('list_ids');
  expect(ids.ids.map((i: Json) => i.id)).toEqual([
    '0x100',
    '0x200',
    '0x300',
    '0x310',
    '0x400',
    '0x410',
    '0x500',
    '0x7E0',
    '0x7E8',
  ]);
  expect(ids.ids[0]).toMatchObject({ id: '0x100', count: 1000 });
  expect(ids.ids[0].rateHz).toBeCloseTo(100, 1);

  const stats = await run('byte_stats', { id: '0x300' });
  expect(stats.bytes[0]).toMatchObject({
    byte: 0,
    changes: 0,
    distinct: 1,
    min: 0x11,
    max: 0x11,
    entropyBits: 0,
  });
  expect(stats.bytes[1].entropyBits).toBeGreaterThan(7.5); // a byte counter: near-uniform
  expect(stats.bytes[3].changes).toBeGreaterThan(90);

  const raw = await run('raw_frames', { id: '0x7E8', n: 3 });
  expect(raw.frames.map((f: Json) => f.data.slice(0, 2))).toEqual(['10', '21', '22']);
  expect(raw.frames[0]).toMatchObject({ id: '0x7E8', dlc: 8, channel: 0 });

  const counters = await run('detect_counters', { id: '0x100' });
  expect(counters.ids[0].candidates).toHaveLength(1);
  expect(bitsOf(counters.ids[0].candidates[0].field)).toEqual([48, 49, 50, 51]);
  expect(counters.ids[0].candidates[0]).toMatchObject({ step: 1, modulus: 16 });

  const checksums = await run('detect_checksums', { id: '0x100' });
  expect(checksums.ids[0].candidates[0]).toMatchObject({
    algorithm: 'xor8',
    coveredBytes: [0, 1, 2, 3, 4, 5, 6],
  });
  expect(bitsOf(checksums.ids[0].candidates[0].field)).toEqual([56, 57, 58, 59, 60, 61, 62, 63]);

  const fields = await run('detect_fields', { id: '0x100' });
  const described = fields.ids[0].candidates.map((c: Json) => [
    c.field.startBit,
    c.field.length,
    c.field.byteOrder,
    c.signed,
  ]);
  expect(described).toEqual(
    expect.arrayContaining([
      [7, 14, 'big_endian', false],
      [21, 12, 'big_endian', true],
    ]),
  );

  const flags = await run('detect_flags', { id: '0x100' });
  expect(flags.ids[0].candidates.map((c: Json) => bitsOf(c.field))).toEqual([[40]]);

  const tables = await run('detect_value_tables', { minConfidence: 0.5 });
  const gear = tables.ids.find((i: Json) => i.id === '0x310').candidates[0];
  expect(gear.field).toEqual({ startBit: 8, length: 3, byteOrder: 'little_endian' });
  expect(gear.values.map((v: Json) => v.value)).toEqual([1, 2, 6]);

  const muxes = await run('detect_multiplexers');
  expect(muxes.ids.map((i: Json) => i.id)).toContain('0x200');
  const mux = muxes.ids.find((i: Json) => i.id === '0x200').candidates[0];
  expect(mux.field).toEqual({ startBit: 0, length: 2, byteOrder: 'little_endian' });
  expect(mux.groups.map((g: Json) => g.value)).toEqual([0, 1, 2]);

  const all = await run('detect_all', { id: '0x200' });
  expect(all.ids).toHaveLength(1);
  expect(all.ids[0].multiplexers).toHaveLength(1);
  expect(all.ids[0].fields.map((f: Json) => [f.multiplexerValue, f.field.startBit, f.field.length])).toEqual(
    expect.arrayContaining([
      [0, 8, 16],
      [1, 8, 8],
      [2, 30, 10],
    ]),
  );

  const draft = await run('draft_dbc');
  expect(draft.messages).toBe(9);
  expect(draft.dbc).toMatch(/^BO_ 256 MSG_0x100: 8 /m);
  expect(draft.dbc).toMatch(/SG_ \w+ M : 0\|2@1\+/); // the multiplexer selector of 0x200

  const opened = await run('mark', { label: 'button', action: 'begin', at: BUTTON[0] });
  expect(opened.mark).toMatchObject({ label: 'button', kind: 'interval', start: BUTTON[0], source: 'mcp' });
  expect(opened.mark.end).toBeUndefined();
  expect((await run('mark', { label: 'button', at: BUTTON[1] })).mark).toMatchObject({
    start: BUTTON[0],
    end: BUTTON[1],
  }); // toggle closes
  expect((await run('mark', { label: 'note', action: 'point', at: 8 })).mark).toMatchObject({
    kind: 'point',
    start: 8,
    end: 8,
  });
  const marks = await run('list_marks', { label: 'button' });
  expect(marks.marks).toEqual([
    expect.objectContaining({ label: 'button', start: BUTTON[0], end: BUTTON[1] }),
  ]);

  const ranked = await run('rank_bytes', { label: 'button', top: 5 });
  expect(ranked.bytes[0]).toMatchObject({ id: '0x300', byte: 3, changeRateInside: 1 });
  expect(ranked.bytes[0].changeZ).toBeGreaterThan(10);
  expect(ranked.bits[0].id).toBe('0x300');
  expect(Math.floor(ranked.bits[0].bit / 8)).toBe(3);

  const defined = await run('define_signal', {
    id: '0x100',
    name: 'Steer',
    startBit: 21,
    length: 12,
    byteOrder: 'big_endian',
    signed: true,
    factor: 0.1,
    unit: 'deg',
  });
  expect(defined.step).toMatchObject({
    kind: 'define',
    source: 'mcp',
    signal: { id: '0x100', name: 'Steer', minimum: -204.8, maximum: 204.7 },
  });
  expect((await run('list_signals')).signals).toEqual([
    expect.objectContaining({
      id: '0x100',
      name: 'Steer',
      startBit: 21,
      length: 12,
      byteOrder: 'big_endian',
      signed: true,
      factor: 0.1,
    }),
  ]);

  const decoded = await run('decode_frames', { id: '0x100', n: 5 });
  const rawFrames = await call(client, 'raw_frames', { id: '0x100', n: 5 });
  expect(decoded.frames).toHaveLength(5);
  decoded.frames.forEach((row: Json, i: number) => {
    const bytes = Uint8Array.from(rawFrames.frames[i].data.split(' '), (h: string) => parseInt(h, 16));
    const expected =
      toSigned(extractRaw(bytes, { startBit: 21, length: 12, byteOrder: 'big_endian', signed: false }), 12) *
      0.1;
    expect(row).toMatchObject({ timestamp: rawFrames.frames[i].timestamp, id: '0x100' });
    expect(row.signals[0].name).toBe('Steer');
    expect(row.signals[0].value).toBeCloseTo(expected, 9);
  });

  const watched = await run('watch_events', { ids: ['0x300'], signals: ['Steer'], cursor: 5, limit: 40 });
  expect(watched.events).toHaveLength(40);
  expect(watched.more).toBe(true);
  expect(watched.events.every((e: Json) => e.timestamp > 5)).toBe(true);
  expect(
    watched.events.some((e: Json) => e.kind === 'frame' && e.id === '0x300' && e.changedBytes.includes(3)),
  ).toBe(true);
  expect(
    watched.events.some((e: Json) => e.kind === 'signal' && e.signal === 'Steer' && e.previous !== null),
  ).toBe(true);
  const later = await call(client, 'watch_events', { ids: ['0x300'], cursor: watched.cursor, limit: 1000 });
  expect(later.events[0].timestamp).toBeGreaterThan(watched.cursor);
  // Outside BUTTON only the byte counter moves 0x300's payload.
  expect(
    later.events
      .filter((e: Json) => e.timestamp > BUTTON[1] + 0.05)
      .every((e: Json) => e.changedBytes.join() === '1'),
  ).toBe(true);

  expect((await run('remove_signal', { id: '0x100', name: 'Steer' })).step).toMatchObject({
    kind: 'remove',
    source: 'mcp',
  });
  expect((await call(client, 'list_signals')).signals).toEqual([]);
  const undone = await run('undo');
  expect(undone.undone).toMatchObject({ kind: 'remove', signal: { name: 'Steer' } });
  expect((await call(client, 'list_signals')).signals.map((s: Json) => s.name)).toEqual(['Steer']);

  const isotp = await run('list_isotp_messages');
  expect(isotp.streams.map((s: Json) => s.id)).toEqual(['0x7E0', '0x7E8']);
  const answers = isotp.messages.filter((m: Json) => m.id === '0x7E8');
  expect(answers).toHaveLength(5);
  const vinHex = Array.from(VIN, (c) => c.charCodeAt(0).toString(16).toUpperCase()).join(' ');
  expect(answers[0]).toMatchObject({
    kind: 'multi',
    length: 20,
    complete: true,
    frames: 3,
    data: `62 F1 90 ${vinHex}`,
  });
  expect(answers[0].flowControl).toEqual([
    expect.objectContaining({ id: '0x7E0', status: 'continue', blockSize: 0, stMin: 10 }),
  ]);
  expect(isotp.messages.filter((m: Json) => m.id === '0x7E0').map((m: Json) => m.data)).toEqual(
    Array(5).fill('22 F1 90'),
  );

  const repeats = await run('find_repeated_blocks');
  expect(repeats.periodic).toEqual(
    expect.arrayContaining([expect.objectContaining({ id: '0x400', period: 4, matchRate: 1 })]),
  );
  const replayed = repeats.blocks.find((b: Json) => b.id === '0x410');
  expect(replayed).toMatchObject({ length: REPLAYED_BLOCK_LENGTH });
  expect(replayed.occurrences.map((t: number) => Math.round(t * 20))).toEqual([20, 90, 150]);

  const fit = await run('calibrate_reference', { referencePath: scene.reference });
  expect(fit.best).toMatchObject({
    id: CALIBRATION.id,
    signed: false,
    field: { startBit: CALIBRATION.field.startBit, byteOrder: 'little_endian' },
  });
  expect(fit.best.scale).toBeCloseTo(CALIBRATION.scale, 9);
  expect(fit.best.offset).toBeCloseTo(CALIBRATION.offset, 6);
  expect(fit.best.r2).toBeGreaterThan(0.99999);
  expect(fit.referenceSamples).toBe(20);

  expect(
    (await run('write_memory', { key: 'steer', value: '0x100 bits 21..: steering angle, 0.1 deg' })).entry,
  ).toMatchObject({ key: 'steer' });
  expect((await run('read_memory', { key: 'steer' })).entry.value).toBe(
    '0x100 bits 21..: steering angle, 0.1 deg',
  );

  const found = await run('search', { query: 'Steer' });
  expect(found.results[0]).toEqual({
    id: 'signal:0x100:Steer',
    title: 'Signal Steer on 0x100',
    url: 'canlab://signal/0x100/Steer',
  });
  expect(found.results.map((r: Json) => r.id)).toContain('memory:steer');
  const counterHits = await call(client, 'search', { query: 'counter 0x100' });
  expect(counterHits.results[0].id).toBe('finding:0x100:counter:0');
  const markHits = await call(client, 'search', { query: 'button' });
  expect(markHits.results[0].id).toBe('mark:1');

  const fetched = await run('fetch', { id: 'signal:0x100:Steer' });
  expect(fetched).toMatchObject({
    id: 'signal:0x100:Steer',
    url: 'canlab://signal/0x100/Steer',
    metadata: { factor: 0.1, unit: 'deg', byteOrder: 'big_endian' },
  });
  expect(fetched.text).toContain('Steer');

  expect((await call(client, 'status')).status).toMatchObject({
    signalCount: 1,
    markCount: 2,
    openMarks: [],
  });
  return called;
}

/** Every tool with invalid arguments; run after exerciseEveryTool (a capture is loaded, Steer defined). */
export async function exerciseInvalidArguments(client: Client, scene: SceneFiles): Promise<Set<string>> {
  const refused = new Set<string>();
  const bad = async (name: string, args: Record<string, unknown>, message: RegExp): Promise<void> => {
    refused.add(name);
    expect(await callError(client, name, args)).toMatch(message);
  };
  const badCsv = join(scene.dir, 'bad-reference.csv');
  writeFileSync(badCsv, 'time,value\n0.5,1\n1.0,oops\n');

  await bad('load_capture', { path: join(scene.dir, 'missing.log') }, /missing\.log/);
  await bad('status', { verbose: true }, /Unrecognized key/);
  await bad('list_ids', { limit: 0 }, /Invalid arguments for tool list_ids/);
  await bad('byte_stats', { id: 'abc' }, /"abc" is not an id/);
  await bad('byte_stats', { id: '0x6FF' }, /0x6FF does not occur/);
  await bad('raw_frames', { from: 5, to: 1 }, /from 5 is after to 1/);
  await bad('detect_counters', { id: '0x7FF' }, /0x7FF does not occur/);
  await bad('detect_checksums', { minConfidence: 2 }, /minConfidence/);
  await bad('detect_fields', { id: 256 }, /expected string/);
  await bad('detect_flags', { id: '0x3FFFFFFF' }, /beyond the 29-bit/);
  await bad('detect_value_tables', { minConfidence: -1 }, /minConfidence/);
  await bad('detect_multiplexers', { id: '' }, /is not an id/);
  await bad('detect_all', { id: '0x12G' }, /is not an id/);
  await bad('draft_dbc', { format: 'kcd' }, /Unrecognized key/);
  await bad('list_signals', { all: true }, /Unrecognized key/);
  await bad(
    'define_signal',
    { id: '0x100', name: '1st', startBit: 0, length: 8 },
    /must be a DBC identifier/,
  );
  await bad('define_signal', { id: '0x100', name: 'Wide', startBit: 0, length: 65 }, /length/);
  await bad('remove_signal', { id: '0x100', name: 'Nope' }, /no signal Nope is defined on 0x100/);
  await bad('undo', { steps: 2 }, /Unrecognized key/);
  await bad('decode_frames', { n: 0 }, /Invalid arguments for tool decode_frames/);
  await bad('mark', { label: 'x', action: 'stop' }, /action/);
  await bad('mark', { label: 'button', action: 'end' }, /no interval is open for 'button'/);
  await bad('list_marks', { label: 5 }, /expected string/);
  await bad('rank_bytes', { label: 'never' }, /no marks labelled 'never'/);
  await bad('watch_events', {}, /name at least one id or signal/);
  await bad('list_isotp_messages', { channel: -1 }, /channel/);
  await bad('find_repeated_blocks', { minLength: 1 }, /minLength/);
  await bad(
    'calibrate_reference',
    { referencePath: badCsv },
    /bad-reference\.csv:3: expected "timestamp,value"/,
  );
  await bad('read_memory', { key: 'absent' }, /no entry under 'absent'/);
  await bad('write_memory', { key: '' }, /Invalid arguments for tool write_memory/);
  await bad('search', { query: 7 }, /expected string/);
  await bad('fetch', { id: 'id:0x6FF' }, /no record 'id:0x6FF'/);
  expect(await callError(client, 'inject', { id: '0x100', data: '00' })).toMatch(/Tool inject not found/);

  // The server still answers, and nothing the refusals touched changed.
  expect((await call(client, 'status')).status).toMatchObject({
    connection: 'loaded',
    signalCount: 1,
    markCount: 2,
  });
  return refused;
}
