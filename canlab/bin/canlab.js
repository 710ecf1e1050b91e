#!/usr/bin/env node
'use strict';
// Runs the TypeScript sources directly through tsx's CommonJS require hook.
require('tsx/cjs');
const { runCli } = require('../src/cli/main.ts');

const io = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
};

runCli(process.argv.slice(2), io).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(
      `canlab: internal error: ${String(err && err.message ? err.message : err).split('\n')[0]}\n`,
    );
    process.exitCode = 70;
  },
);
