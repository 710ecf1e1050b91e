import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCli } from '../../src/cli/main';
import { compileDecoder, decodeMessage } from '../../src/dbc/codec';
import { lintDbc } from '../../src/dbc/lint';
import type { DbcDatabase } from '../../src/dbc/model';
import { loadDbcSource, parseDbc, parseDbcSource } from '../../src/dbc/parse';
import { writeDbc } from '../../src/dbc/write';
import { runCanTool } from './cantools';
import { bytes, fixtureDbcs } from './helpers';

/** What tools/can/dbc_summary.py prints: cantools' reading of a DBC. */
interface CantoolsSummary {
  strict: string;
  lenient: string;
  messages?: Array<{
    name: string;
    id: number;
    extended: boolean;
    length: number;
    signals: Array<{ name: string; is_multiplexer: boolean; multiplexer_ids: number[] | null }>;
  }>;
  decoded?: Array<Record<string, number | string>>;
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'canlab-dbc-as-they-are-'));

function cantools(file: string, frames: string[] = []): CantoolsSummary {
  return JSON.parse(runCanTool('dbc_summary.py', [file, ...frames])) as CantoolsSummary;
}

function dbcFile(name: string, body: string): string {
  const file = path.join(dir, name);
  writeFileSync(
    file,
    `VERSION ""\n\nNS_ :\n\tCM_\n\tBA_DEF_\n\tBA_\n\tVAL_\n\tSG_MUL_VAL_\n\nBS_:\n\nBU_: A B\n\n${body}`,
  );
  return file;
}

/** canlab's decoding of `<id>[x]#<hex>` frames, as plain name → value records like cantools' (undefined: no message). */
function canlabDecoded(db: DbcDatabase, frames: string[]): Array<Record<string, number> | undefined> {
  const decode = compileDecoder(db);
  return frames.map((f) => {
    const [id = '', data = ''] = f.split('#');
    const result = decode(parseInt(id, 16), id.endsWith('x'), bytes(data));
    return result && Object.fromEntries(result.signals.map((s) => [s.name, s.value]));
  });
}

/** The file's findings as [line, level, message]. */
function lineLevelMessage(file: string): Array<[number, string, string]> {
  return lintDbc(parseDbcSource(readFileSync(file, 'utf8'))).map((f) => [f.line, f.level, f.message]);
}

function roundTrips(db: DbcDatabase): void {
  const text = writeDbc(db);
  expect(parseDbc(text, 'rewritten.dbc')).toEqual(db);
  expect(writeDbc(parseDbc(text))).toBe(text);
}

function bufferIo(): { out: string; err: string; stdout: (t: string) => void; stderr: (t: string) => void } {
  const io = {
    out: '',
    err: '',
    stdout: (t: string) => void (io.out += t),
    stderr: (t: string) => void (io.err += t),
  };
  return io;
}

describe('every fixture DBC read as cantools reads it', () => {
  test.each(fixtureDbcs())(
    '%s',
    async (_label, file) => {
      const parsed = await loadDbcSource(file);
      const findings = lintDbc(parsed);
      const theirs = cantools(file);
      if (theirs.messages === undefined) {
        // cantools refuses two of them: opendbc's Tesla DBC for a VAL_ of a signal it lacks, which
        // lint reports; Mazda's for message names starting with a digit, which canlab reads.
        if (file.endsWith('tesla_can.dbc')) {
          expect(theirs.lenient).toContain('unused VAL_ entries in DBC:\n    VAL_ 568 UI_mapSpeedLimit');
          expect(findings.filter((f) => f.code === 'unknown-target').map((f) => f.message)).toEqual([
            'VAL_ for signal UI_mapSpeedLimit of message 568, which the file does not define: kept as written, without effect',
          ]);
        } else expect(theirs.lenient).toMatch(/Invalid syntax at line \d+, column \d+: "BO_ \d+ >>!<<\d/);
        return;
      }
      const ours = parsed.db.messages.map((m) => ({
        name: m.name,
        id: m.id,
        extended: m.extended,
        length: m.length,
        signals: m.signals
          .map((s) => ({
            name: s.name,
            is_multiplexer: s.isMultiplexer,
            multiplexer_ids: s.extendedMultiplexing
              ? s.extendedMultiplexing.ranges.flatMap(([lo, hi]) =>
                  Array.from({ length: hi - lo + 1 }, (_, k) => lo + k),
                )
              : s.multiplexerValue === undefined
                ? null
                : [s.multiplexerValue],
          }))
          .sort((a, b) => a.name.localeCompare(b.name)),
      }));
      const expected = theirs.messages.map((m) => ({
        ...m,
        signals: m.signals
          .map((s) => ({
            name: s.name,
            is_multiplexer: s.is_multiplexer,
            multiplexer_ids: s.multiplexer_ids,
          }))
          .sort((a, b) => a.name.localeCompare(b.name)),
      }));
      expect(ours).toEqual(expected);
      // cantools' strict load checks what lint reports as overlapping or out-of-message signals.
      const structural = findings.filter(
        (f) => f.code === 'overlapping-signals' || f.code === 'signal-outside-message',
      );
      expect(structural.length > 0).toBe(theirs.strict !== 'ok');
    },
    30_000,
  );
});

describe('ids above 0x7FF without the extended flag', () => {
  const body = (id: number): string =>
    `BO_ ${id} Engine: 8 A\n SG_ Speed : 0|16@1+ (0.1,0) [0|0] "km/h" B\n\n` +
    `BO_ 256 Plain: 8 A\n SG_ X : 0|8@1+ (1,0) [0|0] "" B\n\nCM_ BO_ ${id} "engine speed";\n`;
  const frames = ['18FF0000x#1027000000000000', '100#0300000000000000'];

  test('read as the 29-bit id opendbc matches, decoded as cantools decodes the flagged id, reported with the line', () => {
    const file = dbcFile('noflag.dbc', body(0x18ff0000));
    const parsed = parseDbcSource(readFileSync(file, 'utf8'), file);
    const engine = parsed.db.messages[0]!;
    expect(engine).toMatchObject({ id: 0x18ff0000, extended: true, idWithoutExtendedFlag: true });
    expect(engine.comment).toBe('engine speed');
    expect(lintDbc(parsed)).toEqual([
      {
        line: 14,
        level: 'warning',
        code: 'id-without-extended-flag',
        message:
          'BO_ 419364864 Engine: id 0x18FF0000 needs 29 bits but lacks the extended flag (bit 31); read as the ' +
          '29-bit id 0x18FF0000, as opendbc and SavvyCAN match it (cantools and canmatrix refuse the file); write 2566848512 to say so',
        decoding: true,
      },
    ]);
    // cantools refuses the file as written, and decodes the same frames once the flag is set.
    expect(cantools(file).lenient).toBe(
      'DBC: "Standard frame id 0x18ff0000 is more than 11 bits in message Engine."',
    );
    const flagged = cantools(dbcFile('flag.dbc', body(0x18ff0000 + 0x80000000)), frames);
    expect(canlabDecoded(parsed.db, frames)).toEqual([flagged.decoded![0], flagged.decoded![1]]);
    // A rewrite keeps the id as the file wrote it.
    expect(writeDbc(parsed.db)).toContain('BO_ 419364864 Engine: 8 A');
    roundTrips(parsed.db);
  });

  test('an id wider than 29 bits is an error: no frame carries it', () => {
    const parsed = parseDbcSource(
      `BO_ ${0x80000000 + 0x3fffffff} Wide: 8 A\n SG_ S : 0|8@1+ (1,0) [0|0] "" B\n`,
    );
    expect(lintDbc(parsed).map((f) => [f.line, f.level, f.code])).toEqual([[1, 'error', 'id-out-of-range']]);
  });

  test('canlab decode prints the warning on stderr and decodes the 29-bit frames', async () => {
    const file = dbcFile('noflag-cli.dbc', body(0x18ff0000));
    const capture = path.join(dir, 'engine.log');
    writeFileSync(capture, '(1.000000) can0 18FF0000#1027000000000000\n(1.100000) can0 100#03\n');
    const out = path.join(dir, 'engine.csv');
    const io = bufferIo();
    expect(await runCli(['decode', capture, '--dbc', file, '--out', out], io)).toBe(0);
    expect(io.err).toBe(
      `canlab: ${file}:14: warning: BO_ 419364864 Engine: id 0x18FF0000 needs 29 bits but lacks the extended flag (bit 31); ` +
        'read as the 29-bit id 0x18FF0000, as opendbc and SavvyCAN match it (cantools and canmatrix refuse the file); write 2566848512 to say so\n',
    );
    expect(readFileSync(out, 'utf8')).toBe(
      'timestamp,id,message,signals\n1.000000,0x18FF0000,Engine,Speed=1000\n1.100000,0x100,Plain,X=3\n',
    );
  });
});

describe('SystemMessageLongSymbol and SystemSignalLongSymbol', () => {
  test('a file cantools wrote: the long names replace the short ones, as cantools reads them back', () => {
    const file = path.join(dir, 'long-names.dbc');
    runCanTool('long_names_dbc.py', [file]);
    const parsed = parseDbcSource(readFileSync(file, 'utf8'), file);
    const frames = ['123#0110270000000000', '123#0300000000000000'];
    const theirs = cantools(file, frames);
    const [message] = parsed.db.messages;
    expect(message!.name).toBe('Brake_Disc_Temperatures_Of_All_Four_Wheels');
    expect(message!.shortName).toBe('Brake_Disc_Temperatures_Of_All_F');
    expect(message!.signals.map((s) => s.name).sort()).toEqual(
      theirs.messages![0]!.signals.map((s) => s.name).sort(),
    );
    const rotor = message!.signals.find((s) => s.name === 'Temperature_Of_The_Left_Front_Brake_Disc_Rotor')!;
    expect(rotor).toMatchObject({
      shortName: 'Temperature_Of_The_Left_Front_Br',
      comment: 'measured at the rotor',
      valueTable: new Map([[0, 'Cold']]),
    });
    expect(canlabDecoded(parsed.db, frames)).toEqual(theirs.decoded);
    expect(lintDbc(parsed).map((f) => [f.level, f.code])).toEqual([
      ['note', 'long-name'],
      ['note', 'long-name'],
    ]);
    // Written back with the short names in every statement, and the attributes that lengthen them.
    const text = writeDbc(parsed.db);
    expect(text).toContain('BO_ 291 Brake_Disc_Temperatures_Of_All_F: 8 Vector__XXX');
    expect(text).toContain('VAL_ 291 Temperature_Of_The_Left_Front_Br 0 "Cold" ;');
    roundTrips(parsed.db);
  });

  test('a long-named switch stays the switch of the SG_MUL_VAL_ that names it short (cantools cannot decode this)', () => {
    const parsed = parseDbcSource(
      'BO_ 512 Pages: 8 A\n SG_ Page_Selector_Of_The_Wheel_Spee M : 0|8@1+ (1,0) [0|0] "" B\n' +
        ' SG_ Speed m1 : 8|16@1+ (0.01,0) [0|0] "" B\n' +
        'BA_DEF_ SG_ "SystemSignalLongSymbol" STRING ;\n' +
        'BA_ "SystemSignalLongSymbol" SG_ 512 Page_Selector_Of_The_Wheel_Spee "Page_Selector_Of_The_Wheel_Speed_Message";\n' +
        'SG_MUL_VAL_ 512 Speed Page_Selector_Of_The_Wheel_Spee 1-2;\n',
    );
    const message = parsed.db.messages[0]!;
    expect(message.signals[1]!.extendedMultiplexing!.multiplexer).toBe(
      'Page_Selector_Of_The_Wheel_Speed_Message',
    );
    expect(decodeMessage(message, bytes('0210270000000000')).map((s) => [s.name, s.value])).toEqual([
      ['Page_Selector_Of_The_Wheel_Speed_Message', 2],
      ['Speed', 100],
    ]);
    expect(writeDbc(parsed.db)).toContain('SG_MUL_VAL_ 512 Speed Page_Selector_Of_The_Wheel_Spee 1-2;');
    roundTrips(parsed.db);
  });
});

describe('VECTOR__INDEPENDENT_SIG_MSG', () => {
  test('kept for a rewrite, not a message: the messages are those cantools lists', () => {
    const body =
      'BO_ 3221225472 VECTOR__INDEPENDENT_SIG_MSG: 0 Vector__XXX\n SG_ Unused : 0|8@1+ (1,0) [0|0] "" Vector__XXX\n\n' +
      'BO_ 256 Plain: 8 A\n SG_ X : 0|8@1+ (1,0) [0|0] "" B\n\nCM_ SG_ 3221225472 Unused "not in any message";\n';
    const file = dbcFile('independent.dbc', body);
    const parsed = parseDbcSource(readFileSync(file, 'utf8'), file);
    expect(parsed.db.messages.map((m) => m.name)).toEqual(cantools(file).messages!.map((m) => m.name));
    expect(parsed.db.independentSignals?.signals[0]).toMatchObject({
      name: 'Unused',
      comment: 'not in any message',
    });
    expect(compileDecoder(parsed.db)(0x40000000, true, new Uint8Array(8))).toBeUndefined();
    expect(lintDbc(parsed).map((f) => [f.line, f.level, f.code])).toEqual([
      [14, 'note', 'independent-signals'],
    ]);
    // Its value tables too survive a rewrite (cantools refuses them: "unused VAL_ entries").
    const withValues = parseDbc(`${readFileSync(file, 'utf8')}VAL_ 3221225472 Unused 0 "Zero" ;\n`);
    expect(withValues.independentSignals!.signals[0]!.valueTable).toEqual(new Map([[0, 'Zero']]));
    roundTrips(withValues);
  });
});

describe('a bare m multiplexer indicator', () => {
  test('with SG_MUL_VAL_ and two switches: decoded as cantools decodes it', () => {
    const file = dbcFile(
      'bare-m.dbc',
      'BO_ 256 Mux: 8 A\n SG_ Sel M : 0|4@1+ (1,0) [0|0] "" B\n SG_ Sel2 M : 4|4@1+ (1,0) [0|0] "" B\n' +
        ' SG_ Speed m : 8|16@1+ (0.1,0) [0|0] "" B\n SG_ Temp m2 : 24|8@1- (1,0) [0|0] "" B\n\n' +
        'SG_MUL_VAL_ 256 Speed Sel 1-1, 3-4;\nSG_MUL_VAL_ 256 Temp Sel2 2-2;\n',
    );
    const frames = ['100#2310270200000000', '100#2410270200000000'];
    const parsed = parseDbcSource(readFileSync(file, 'utf8'), file);
    const theirs = cantools(file, frames);
    expect(theirs.messages![0]!.signals.find((s) => s.name === 'Speed')!.multiplexer_ids).toEqual([1, 3, 4]);
    expect(canlabDecoded(parsed.db, frames)).toEqual(theirs.decoded);
    // Where Sel selects no Speed, canlab leaves it out (cantools raises "expected multiplexer id 1, 3 or 4").
    expect(canlabDecoded(parsed.db, ['100#2210270200000000'])).toEqual([{ Sel: 2, Sel2: 2, Temp: 2 }]);
    expect(lintDbc(parsed).map((f) => [f.line, f.level, f.code])).toEqual([
      [17, 'note', 'multiplexed-by-sg-mul-val'],
    ]);
    expect(writeDbc(parsed.db)).toContain(' SG_ Speed m : 8|16@1+');
    roundTrips(parsed.db);
  });

  test('with one switch: SG_MUL_VAL_ gives its values (cantools fails on the file)', () => {
    const file = dbcFile(
      'bare-m-one-switch.dbc',
      'BO_ 256 Mux: 8 A\n SG_ Sel M : 0|8@1+ (1,0) [0|0] "" B\n SG_ Speed m : 8|16@1+ (0.1,0) [0|0] "" B\n' +
        ' SG_ Temp m2 : 8|8@1- (1,0) [0|0] "" B\n\nSG_MUL_VAL_ 256 Speed Sel 1-1, 3-4;\n',
    );
    expect(cantools(file).lenient).toBe('DBC: "invalid literal for int() with base 10: \'\'"');
    const db = parseDbc(readFileSync(file, 'utf8'));
    expect(canlabDecoded(db, ['100#0310270000000000', '100#02FE000000000000'])).toEqual([
      { Sel: 3, Speed: 1000 },
      { Sel: 2, Temp: -2 },
    ]);
  });

  test('without SG_MUL_VAL_: no value selects it, a warning says so', () => {
    const parsed = parseDbcSource(
      'BO_ 256 Mux: 8 A\n SG_ Sel M : 0|8@1+ (1,0) [0|0] "" B\n SG_ Speed m : 8|16@1+ (0.1,0) [0|0] "" B\n',
    );
    expect(canlabDecoded(parsed.db, ['100#0310270000000000'])).toEqual([{ Sel: 3 }]);
    expect(lintDbc(parsed)).toEqual([
      {
        line: 3,
        level: 'warning',
        code: 'multiplexed-without-values',
        message: "SG_ Speed of Mux: 'm' without a value and no SG_MUL_VAL_ to give one: never decoded",
        decoding: true,
      },
    ]);
  });
});

describe('lint', () => {
  test('overlapping signals and signals past the message: the checks of cantools strict load', () => {
    const overlap = dbcFile(
      'overlap.dbc',
      'BO_ 256 Over: 8 A\n SG_ Wide : 0|16@1+ (1,0) [0|0] "" B\n SG_ Low : 8|8@1+ (1,0) [0|0] "" B\n',
    );
    expect(cantools(overlap).strict).toBe('DBC: "The signals Low and Wide are overlapping in message Over."');
    expect(lineLevelMessage(overlap)).toEqual([
      [
        16,
        'warning',
        'SG_ Low of Over shares 8 bits with Wide (line 15) in the same frames: at most one of them is right',
      ],
    ]);
    const outside = dbcFile('outside.dbc', 'BO_ 257 Outside: 4 A\n SG_ Far : 31|16@0+ (1,0) [0|0] "" B\n');
    expect(cantools(outside).strict).toBe('DBC: "The signal Far does not fit in message Outside."');
    expect(lineLevelMessage(outside)).toEqual([
      [
        15,
        'error',
        'SG_ Far of Outside: needs 5 bytes but the message has 4; not decoded from frames of that length',
      ],
    ]);
  });

  test('signals that never meet in a frame do not overlap: different values of one switch, down a chain', () => {
    const parsed = parseDbcSource(
      'BO_ 300 Chain: 8 A\n SG_ S0 M : 0|4@1+ (1,0) [0|0] "" B\n SG_ S1 m0M : 4|4@1+ (1,0) [0|0] "" B\n' +
        ' SG_ S2 m0 : 8|8@1+ (1,0) [0|0] "" B\n SG_ S3 m1 : 8|8@1+ (1,0) [0|0] "" B\n SG_ S4 m1 : 8|24@1+ (1,0) [0|0] "" B\n' +
        'SG_MUL_VAL_ 300 S1 S0 0-0;\nSG_MUL_VAL_ 300 S2 S1 0-0;\nSG_MUL_VAL_ 300 S3 S1 1-1;\nSG_MUL_VAL_ 300 S4 S0 1-1;\n',
    );
    expect(lintDbc(parsed)).toEqual([]);
  });

  test('duplicates, orphan statements, lengths and switches, each with its line', () => {
    const parsed = parseDbcSource(
      [
        'BO_ 256 One: 8 A',
        ' SG_ A : 0|8@1+ (1,0) [0|0] "" B',
        ' SG_ A : 8|8@1+ (1,0) [0|0] "" B',
        'BO_ 256 Two: 8 A',
        ' SG_ M1 m1 : 0|8@1+ (1,0) [0|0] "" B',
        'BO_ 257 One: 10 A',
        ' SG_ S1 M : 0|4@1+ (1,0) [0|0] "" B',
        ' SG_ S2 M : 4|4@1+ (1,0) [0|0] "" B',
        ' SG_ X m1 : 8|8@1+ (1,0) [0|0] "" B',
        ' SG_ Y m2 : 16|8@1+ (1,0) [0|0] "" B',
        'BO_ 258 Big: 72 A',
        'VAL_ 256 Missing 0 "Zero" ;',
        'SG_MUL_VAL_ 257 Y Nope 2-2;',
        'CM_ BO_ 999 "nobody";',
        '',
      ].join('\n'),
    );
    expect(lintDbc(parsed).map((f) => `${f.line} ${f.level} ${f.code}`)).toEqual([
      '3 warning duplicate-signal-name',
      '4 warning duplicate-message-id',
      '5 warning multiplexed-without-switch',
      '6 warning duplicate-message-name',
      '6 warning not-a-frame-length',
      '9 warning ambiguous-switch',
      '10 warning unknown-switch',
      '11 error length-beyond-can-fd',
      '12 warning unknown-target',
      '14 warning unknown-target',
    ]);
  });

  test('canlab lint: findings with file:line, a summary, exit 0 without errors and 1 with', async () => {
    const clean = fixtureDbcs().find(([label]) => label === 'real/toyota_adas.dbc')![1];
    let io = bufferIo();
    expect(await runCli(['lint', clean], io)).toBe(0);
    expect(io.out).toBe(`${clean}: 33 messages, 179 signals; 0 errors, 0 warnings, 0 notes\n`);
    const mazda = fixtureDbcs().find(([label]) => label === 'dbc-opendbc/mazda_2017.dbc')![1];
    io = bufferIo();
    expect(await runCli(['lint', mazda], io)).toBe(1);
    expect(io.out).toContain(
      `${mazda}:290: error: SG_ NEW_SIGNAL_4 of HVAC: needs 9 bytes but the message has 8; not decoded from frames of that length [signal-outside-message]\n`,
    );
    expect(io.out).toMatch(/: \d+ messages, \d+ signals; 1 error, 4 warnings, 0 notes\n$/);
    const broken = dbcFile('broken.dbc', 'BO_ 1 M: 8 A\n SG_ S : 0|8@1+ (1,0) [0|0 "" A\n');
    io = bufferIo();
    expect(await runCli(['lint', broken], io)).toBe(1);
    expect(io.err).toBe(
      `canlab: ${broken}:15: malformed SG_ line: expected ']' after the maximum, found string ""\n`,
    );
    io = bufferIo();
    expect(await runCli(['lint', '--frobnicate', clean], io)).toBe(2);
  });
});
