#!/usr/bin/env node
'use strict';
const { runCli } = require('./entry').loadEntry('cli/main', 'canlab');

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
