import { readFileSync } from 'node:fs';
import { CanlabInputError } from '../../src/errors';
import { decodeDbcBytes, loadDbc, parseDbc } from '../../src/dbc/parse';
import { writeDbc } from '../../src/dbc/write';
import type { DbcDatabase } from '../../src/dbc/model';
import { fixture } from '../fixtures';
import { fixtureDbcs } from './helpers';

function signal(db: DbcDatabase, message: string, name: string) {
  const m = db.messages.find((x) => x.name === message);
  const s = m?.signals.find((x) => x.name === name);
  if (!s) throw new Error(`no signal ${message}.${name}`);
  return s;
}

function errorOf(fn: () => unknown): CanlabInputError {
  try {
    fn();
  } catch (e) {
    if (e instanceof CanlabInputError) return e;
    throw e;
  }
  throw new Error('expected a CanlabInputError');
}

const HEADER = 'VERSION ""\n\nNS_ :\n\tCM_\n\nBS_:\n\nBU_: A\n\n';

describe('parseDbc on the fixtures', () => {
  test.each(fixtureDbcs())('%s parses and round-trips through writeDbc', async (_label, path) => {
    const db = await loadDbc(path);
    expect(db.messages.length + db.nodes.length).toBeGreaterThan(0);
    const text = writeDbc(db);
    const again = parseDbc(text, 'rewritten.dbc');
    expect(again).toEqual(db);
    // Writing is stable: a second rewrite is byte-identical.
    expect(writeDbc(again)).toBe(text);
  });

  test('motohawk.dbc: messages, signals, receivers, value table, comment, attributes', async () => {
    const db = await loadDbc(fixture('dbc-cantools', 'motohawk.dbc'));
    expect(db.version).toBe('1.0');
    expect(db.nodes.map((n) => n.name)).toEqual(['PCM1', 'FOO']);
    expect(db.newSymbols).toHaveLength(28);
    const m = db.messages[0]!;
    expect(m).toMatchObject({ id: 496, extended: false, name: 'ExampleMessage', length: 8, sender: 'PCM1' });
    expect(m.comment).toBe('Example message used as template in MotoHawk models.');
    expect(m.signals.map((s) => s.name)).toEqual(['Temperature', 'AverageRadius', 'Enable']);
    expect(signal(db, 'ExampleMessage', 'Temperature')).toEqual({
      name: 'Temperature',
      startBit: 0,
      length: 12,
      byteOrder: 'big_endian',
      signed: true,
      valueType: 'integer',
      factor: 0.01,
      offset: 250,
      minimum: 229.52,
      maximum: 270.47,
      unit: 'degK',
      receivers: ['PCM1', 'FOO'],
      isMultiplexer: false,
      attributes: {},
    });
    expect(signal(db, 'ExampleMessage', 'Enable').valueTable).toEqual(
      new Map([
        [0, 'Disabled'],
        [1, 'Enabled'],
      ]),
    );
    expect(db.attributeDefinitions).toEqual([
      { name: 'GenMsgCycleTime', objectType: 'BO_', definition: 'INT 0 65535', defaultValue: 0 },
    ]);
  });

  test('extended ids (bit 31), attributes on every object kind, ENUM definitions', async () => {
    const db = await loadDbc(fixture('dbc-cantools', 'attributes.dbc'));
    const m = db.messages[0]!;
    expect(m).toMatchObject({ id: 57, extended: true, name: 'TheMessage' });
    expect(db.messages[1]).toMatchObject({ id: 42, extended: false });
    expect(m.attributes).toEqual({
      TheFloatAttribute: 58.7,
      TheHexAttribute: 5,
      GenMsgSendType: 0,
      GenMsgCycleTime: 1000,
    });
    expect(m.signals[0]!.attributes).toEqual({ TheSignalStringAttribute: 'TestString', GenSigSendType: 1 });
    expect(db.attributes).toEqual({ TheNetworkAttribute: 51, BusType: 'CAN' });
    expect(db.nodes[0]).toEqual({
      name: 'TheNode',
      comment: 'TheNodeComment',
      attributes: { TheNodeAttribute: 99 },
    });
    const defs = new Map(db.attributeDefinitions.map((d) => [d.name, d]));
    expect(defs.get('NWM-WakeupAllowed')).toEqual({
      name: 'NWM-WakeupAllowed',
      objectType: 'SG_',
      definition: 'ENUM "No","Yes"',
      defaultValue: '',
    });
    expect(defs.get('TheSignalStringAttribute')).toMatchObject({ definition: 'STRING', defaultValue: '100' });
    expect(defs.get('TheNetworkAttribute')).toMatchObject({
      objectType: '',
      definition: 'INT 0 100',
      defaultValue: 50,
    });
    expect(defs.get('GenSigStartValue')).toMatchObject({ definition: 'FLOAT 0 100000000000' });
    expect(defs.get('TheUnusedAttributeDefinitionWithoutDefault')?.defaultValue).toBeUndefined();
  });

  test('multiplexer indicators and SG_MUL_VAL_', async () => {
    const db = await loadDbc(fixture('dbc-cantools', 'multiplex_2.dbc'));
    const s1 = signal(db, 'Extended', 'S1');
    expect(s1).toMatchObject({ isMultiplexer: true, multiplexerValue: 0 });
    expect(s1.extendedMultiplexing).toEqual({ multiplexer: 'S0', ranges: [[0, 0]] });
    expect(signal(db, 'Extended', 'S0')).toMatchObject({ isMultiplexer: true });
    expect(signal(db, 'Extended', 'S0').multiplexerValue).toBeUndefined();
    expect(signal(db, 'Extended', 'S4')).toMatchObject({ isMultiplexer: false, multiplexerValue: 2 });
    expect(signal(db, 'Shared', 'S1').extendedMultiplexing).toEqual({
      multiplexer: 'S0',
      ranges: [
        [1, 1],
        [3, 3],
      ],
    });
    expect(signal(db, 'Shared', 'S2').extendedMultiplexing?.ranges).toEqual([[2, 5]]);
    expect(signal(db, 'ExtendedTypes', 'S10')).toMatchObject({
      valueType: 'float32',
      minimum: -3.4e38,
      maximum: 3.4e38,
    });
  });

  test('SIG_VALTYPE_ float types', async () => {
    const db = await loadDbc(fixture('dbc-cantools', 'floating_point.dbc'));
    expect(signal(db, 'Message1', 'Signal1').valueType).toBe('float64');
    expect(signal(db, 'Message2', 'Signal1').valueType).toBe('float32');
    expect(signal(db, 'Message2', 'Signal2').valueType).toBe('float32');
  });

  test('multi-line comments, network comment, VAL_TABLE_ with negative values and an empty table', async () => {
    const abs = await loadDbc(fixture('dbc-cantools', 'abs.dbc'));
    expect(abs.comment).toBe('Version 2.0');
    expect(signal(abs, 'BREMSE_32', 'WheelQuality_FL').comment).toBe(
      'Bit matrix\nBit0 ( 1) Signal Reduced Monitored\nBit1 ( 2) Reduced Accuracy\nBit2 ( 4) Interfered\n' +
        'Bit3 ( 8) Suspicious Plausibility\nBit4 (16) Suspicious Lost\nBit5 (32) Not Initialized\n' +
        'Bit6 (64) Invalid Generic\nBit7 (128) Invalid Individual',
    );
    expect(abs.valueTables.get('ABS_fault_info')?.get(2)).toBe('active faults stored');
    const choices = await loadDbc(fixture('dbc-cantools', 'choices.dbc'));
    expect(signal(choices, 'Foo', 'Foo').valueTable?.get(-5)).toBe('A negative value');
    expect(signal(choices, 'Foo', 'Foo').valueTable?.get(1)).toBe("#%=*\u00e4'");
    const vt = await loadDbc(fixture('dbc-cantools', 'val_table.dbc'));
    expect([...vt.valueTables.keys()]).toEqual(['Table3', 'Table2', 'Table1']);
    expect(vt.valueTables.get('Table2')?.size).toBe(0);
  });

  test('cp1252 text is read as latin1; UTF-8 text as UTF-8', async () => {
    const db = await loadDbc(fixture('dbc-cantools', 'cp1252.dbc'));
    const comment = db.nodes[0]!.comment!;
    const raw = readFileSync(fixture('dbc-cantools', 'cp1252.dbc'));
    const start = raw.indexOf(Buffer.from('CM_ BU_ Node1 "')) + 'CM_ BU_ Node1 "'.length;
    const end = raw.indexOf(Buffer.from('";'), start);
    expect(comment).toBe(raw.subarray(start, end).toString('latin1'));
    expect(comment).toContain('\u00e0\u00e1\u00e2\u00e3\u00e4');
    expect(decodeDbcBytes(Buffer.from('CM_ "\u00b0C";', 'utf8'))).toBe('CM_ "\u00b0C";');
    expect(decodeDbcBytes(new Uint8Array([0x22, 0xb0, 0x22]))).toBe('"\u00b0"');
  });

  test('// comments, BO_TX_BU_ and CAN FD frame formats', async () => {
    const social = await loadDbc(fixture('dbc-cantools', 'socialledge.dbc'));
    expect(social.nodes.find((n) => n.name === 'DRIVER')?.comment).toBe(
      '// The driver controller driving the car //',
    );
    const sym = await loadDbc(fixture('dbc-cantools', 'comments_hex_and_motorola_converted_from_sym.dbc'));
    expect(sym.messages.find((m) => m.name === 'Msg2')?.transmitters).toEqual(['ECU', 'Peripherals']);
    const fd = await loadDbc(fixture('dbc-cantools', 'fd_test.dbc'));
    expect(fd.messages.map((m) => [m.name, m.extended, m.attributes.VFrameFormat])).toEqual([
      ['TestMsg_Ex', true, 1],
      ['TestMsg_Std', false, undefined],
      ['TestMsg_FDStd', false, 14],
      ['TestMsg_FDEx', true, 15],
    ]);
  });

  test('statements without structure in the model are kept verbatim and rewritten', () => {
    const text =
      HEADER +
      'BO_ 100 M: 8 A\n SG_ S : 0|8@1+ (1,0) [0|255] "" A\n\n' +
      'EV_ EnvVar: 0 [0|100] "" 0 1 DUMMY_NODE_VECTOR0 Vector__XXX;\n' +
      'ENVVAR_DATA_ EnvVar: 4;\n' +
      'CM_ EV_ EnvVar "env comment";\n' +
      'BA_DEF_ "Global" INT 0 10;\n' +
      'BA_DEF_REL_ BU_SG_REL_ "Rel" INT 0 1;\n' +
      'BA_DEF_DEF_REL_ "Rel" 0;\n' +
      'BA_REL_ "Rel" BU_SG_REL_ A SG_ 100 S 1;\n' +
      'VAL_ EnvVar 0 "Off" 1 "On" ;\n' +
      'SIG_GROUP_ 100 Group 1 : S;\n' +
      'CM_ SG_ 999 Missing "dangling";\n';
    const db = parseDbc(text, 'extra.dbc');
    expect(db.unparsedStatements).toEqual([
      'EV_ EnvVar: 0 [0|100] "" 0 1 DUMMY_NODE_VECTOR0 Vector__XXX;',
      'ENVVAR_DATA_ EnvVar: 4;',
      'CM_ EV_ EnvVar "env comment";',
      'BA_DEF_REL_ BU_SG_REL_ "Rel" INT 0 1;',
      'BA_DEF_DEF_REL_ "Rel" 0;',
      'BA_REL_ "Rel" BU_SG_REL_ A SG_ 100 S 1;',
      'VAL_ EnvVar 0 "Off" 1 "On" ;',
      'SIG_GROUP_ 100 Group 1 : S;',
      'CM_ SG_ 999 Missing "dangling";',
    ]);
    const again = parseDbc(writeDbc(db), 'again.dbc');
    expect(new Set(again.unparsedStatements)).toEqual(new Set(db.unparsedStatements));
    expect({ ...again, unparsedStatements: undefined }).toEqual({ ...db, unparsedStatements: undefined });
  });

  test('escaped quotes and backslashes in strings survive a round trip', () => {
    const db = parseDbc(HEADER + 'CM_ "say \\"hi\\" C:\\dir\\\\";\n', 'q.dbc');
    expect(db.comment).toBe('say "hi" C:\\dir\\');
    expect(parseDbc(writeDbc(db)).comment).toBe(db.comment);
  });

  test('statements missing their final semicolon before the next keyword are accepted', () => {
    const db = parseDbc(
      HEADER +
        'BO_ 1 M: 8 A\n SG_ S : 0|8@1+ (1,0) [0|0] "" A\n\nVAL_ 1 S 0 "zero" 1 "one"\nCM_ BO_ 1 "c";\n',
    );
    expect(db.messages[0]!.signals[0]!.valueTable?.get(1)).toBe('one');
    expect(db.messages[0]!.comment).toBe('c');
  });
});

describe('parseDbc errors', () => {
  test('an unknown keyword names the file, line and keyword', () => {
    const err = errorOf(() => parseDbc(HEADER + 'BO_ 1 M: 8 A\n\nFOO_ 1 2 3;\n', 'bad.dbc'));
    expect(err.where).toBe('bad.dbc:12');
    expect(err.message).toBe("unknown keyword 'FOO_'");
  });

  test.each([
    [' SG_ S : 0|8@1+ (1,0) [0|0 "" A', "expected ']' after the maximum"],
    [' SG_ S : 0|8@2+ (1,0) [0|0] "" A', 'byte order must be 0 or 1'],
    [' SG_ S : 0|8@1 (1,0) [0|0] "" A', "expected '+' or '-'"],
    [' SG_ S : 0 8@1+ (1,0) [0|0] "" A', "expected '|' between start bit and length"],
    [' SG_ S x3 : 0|8@1+ (1,0) [0|0] "" A', "bad multiplexer indicator 'x3'"],
    [' SG_ S : 0|8@1+ (1;0) [0|0] "" A', "expected ',' between factor and offset"],
    [' SG_ S : 0|0@1+ (1,0) [0|0] "" A', 'has length 0'],
  ])('malformed SG_ line %s', (line, message) => {
    const err = errorOf(() => parseDbc(HEADER + 'BO_ 1 M: 8 A\n' + line + '\n', 'sg.dbc'));
    expect(err.where).toBe('sg.dbc:11');
    expect(err.message).toContain('malformed SG_ line');
    expect(err.message).toContain(message);
  });

  test('SG_ before any BO_', () => {
    const err = errorOf(() => parseDbc(HEADER + ' SG_ S : 0|8@1+ (1,0) [0|0] "" A\n', 'x.dbc'));
    expect(err.where).toBe('x.dbc:10');
    expect(err.message).toMatch(/SG_ outside a BO_/);
  });

  test('unterminated string', () => {
    const err = errorOf(() => parseDbc(HEADER + 'CM_ "never closed;\n', 'x.dbc'));
    expect(err.where).toBe('x.dbc:10');
    expect(err.message).toBe('unterminated string');
  });

  test('SIG_VALTYPE_ on a signal of the wrong length', () => {
    const err = errorOf(() =>
      parseDbc(
        HEADER + 'BO_ 1 M: 8 A\n SG_ S : 0|16@1+ (1,0) [0|0] "" A\n\nSIG_VALTYPE_ 1 S : 1;\n',
        'x.dbc',
      ),
    );
    expect(err.where).toBe('x.dbc:13');
    expect(err.message).toMatch(/16 bits long; float32 needs 32/);
  });
});

describe('attribute helpers', () => {
  test('VFrameFormat decides CAN FD (fd_test.dbc)', async () => {
    const { isFdMessage, messageAttribute, enumValues } = await import('../../src/dbc/attributes');
    const db = await loadDbc(fixture('dbc-cantools', 'fd_test.dbc'));
    expect(db.messages.map((m) => [m.name, isFdMessage(db, m)])).toEqual([
      ['TestMsg_Ex', false],
      ['TestMsg_Std', false],
      ['TestMsg_FDStd', true],
      ['TestMsg_FDEx', true],
    ]);
    expect(messageAttribute(db, db.messages[1]!, 'VFrameFormat')).toBe('StandardCAN');
    expect(messageAttribute(db, db.messages[3]!, 'VFrameFormat')).toBe('ExtendedCAN_FD');
    expect(enumValues(db.attributeDefinitions.find((d) => d.name === 'CANFD_BRS')!)).toEqual(['0', '1']);
  });
});
