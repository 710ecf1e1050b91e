import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as decode from '../../src/cli/commands/decode';
import { formatPhysical } from '../../src/dbc/decoded-csv';
import type { CliIo } from '../../src/cli/command';
import { CanlabInputError } from '../../src/errors';
import { fixture } from '../fixtures';

function bufferIo(): CliIo & { out: string; err: string } {
  const io = {
    out: '',
    err: '',
    stdout: (t: string) => {
      io.out += t;
    },
    stderr: (t: string) => {
      io.err += t;
    },
  };
  return io;
}

const dir = mkdtempSync(path.join(os.tmpdir(), 'canlab-decode-'));

describe('canlab decode', () => {
  test('decodes a candump log with motohawk.dbc to CSV', async () => {
    const capture = path.join(dir, 'moto.log');
    writeFileSync(
      capture,
      [
        '(1436509052.249713) can0 1F0#C006E00000000000',
        '(1436509052.250000) can0 123#DEADBEEF',
        '(1436509052.260000) can0 1F0#0000000000000000',
        '(1436509052.270000) can0 00000456#00',
        '(1436509052.280000) can0 1F0#R',
        '(1436509052.290000) can0 1F0#80',
        '',
      ].join('\n'),
    );
    const out = path.join(dir, 'moto.csv');
    const io = bufferIo();
    const code = await decode.run(
      { positionals: [capture], values: { dbc: fixture('dbc-cantools', 'motohawk.dbc'), out } },
      io,
    );
    expect(code).toBe(0);
    expect(readFileSync(out, 'utf8').split('\n')).toEqual([
      'timestamp,id,message,signals',
      '1436509052.249713,0x1F0,ExampleMessage,Temperature=250.55,AverageRadius=3.2,Enable=1 (Enabled)',
      '1436509052.260000,0x1F0,ExampleMessage,Temperature=250,AverageRadius=0,Enable=0 (Disabled)',
      '1436509052.290000,0x1F0,ExampleMessage,AverageRadius=0,Enable=1 (Enabled)',
      '',
    ]);
    expect(io.out).toBe(
      `decoded 3 of 6 frames from ${capture} with motohawk.dbc into ${out}; ` +
        'skipped 2 frames with 2 ids not in the DBC and 1 remote/error frame\n',
    );
  });

  test('multiplexed and extended-id messages; labels and quoting', async () => {
    const dbc = path.join(dir, 'mux.dbc');
    writeFileSync(
      dbc,
      'VERSION ""\nNS_ :\nBS_:\nBU_: A\n' +
        'BO_ 2147483905 Mux: 8 A\n' +
        ' SG_ Sel M : 0|8@1+ (1,0) [0|0] "" A\n' +
        ' SG_ Speed m1 : 8|16@1+ (0.1,0) [0|0] "km/h" A\n' +
        ' SG_ Temp m2 : 8|8@1- (0.5,-40) [0|0] "C" A\n' +
        ' SG_ Mode m2 : 16|8@1+ (1,0) [0|0] "" A\n' +
        'VAL_ 2147483905 Mode 3 "Eco, quiet" 4 "say \\"hi\\"" ;\n',
    );
    const capture = path.join(dir, 'mux.log');
    writeFileSync(
      capture,
      '(1.000000) can1 00000101#0103000000000000\n(2.500000) can1 00000101#02FE030000000000\n(3.000000) can1 101#01\n',
    );
    const out = path.join(dir, 'mux.csv');
    const io = bufferIo();
    expect(await decode.run({ positionals: [capture], values: { dbc, out } }, io)).toBe(0);
    expect(readFileSync(out, 'utf8')).toBe(
      'timestamp,id,message,signals\n' +
        '1.000000,0x00000101,Mux,Sel=1,Speed=0.3\n' +
        '2.500000,0x00000101,Mux,Sel=2,Temp=-41,"Mode=3 (Eco, quiet)"\n',
    );
    expect(io.out).toMatch(/decoded 2 of 3 frames .*skipped 1 frame with 1 id not in the DBC$/m);
  });

  test('usage errors are CanlabInputError', async () => {
    const io = bufferIo();
    await expect(decode.run({ positionals: [], values: {} }, io)).rejects.toBeInstanceOf(CanlabInputError);
    await expect(decode.run({ positionals: ['a.log'], values: { out: 'x.csv' } }, io)).rejects.toThrow(
      /--dbc/,
    );
    await expect(decode.run({ positionals: ['a.log'], values: { dbc: 'a.dbc' } }, io)).rejects.toThrow(
      /--out/,
    );
    await expect(
      decode.run(
        {
          positionals: ['a.log'],
          values: { dbc: path.join(dir, 'missing.dbc'), out: path.join(dir, 'o.csv') },
        },
        io,
      ),
    ).rejects.toThrow(/cannot read DBC file: no such file/);
  });

  test('a malformed DBC reports file:line', async () => {
    const dbc = path.join(dir, 'bad.dbc');
    writeFileSync(dbc, 'VERSION ""\nBO_ 1 M: 8 A\n SG_ S : 0|8@1+ (1,0) [0|0 "" A\n');
    const capture = path.join(dir, 'one.log');
    writeFileSync(capture, '(1.0) can0 001#00\n');
    const err = await decode
      .run({ positionals: [capture], values: { dbc, out: path.join(dir, 'bad.csv') } }, bufferIo())
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CanlabInputError);
    expect((err as CanlabInputError).where).toBe(`${dbc}:3`);
  });

  test('formatPhysical rounds to the factor decimals', () => {
    expect(formatPhysical(0.1 * 3, 1)).toBe('0.3');
    expect(formatPhysical(250.55000000000001, 2)).toBe('250.55');
    expect(formatPhysical(7, 0)).toBe('7');
    expect(formatPhysical(0.1, -1)).toBe('0.1');
  });
});
