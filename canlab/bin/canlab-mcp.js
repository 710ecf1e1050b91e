#!/usr/bin/env node
'use strict';
// Runs the TypeScript sources directly through tsx's CommonJS require hook. Stdout carries the
// MCP protocol in stdio modes, so everything for a human goes to stderr.
require('tsx/cjs');
const { runMcpLauncher } = require('../src/mcp/launcher.ts');

const io = { stderr: (text) => process.stderr.write(text) };

runMcpLauncher(process.argv.slice(2), io).then(
  (code) => {
    process.exit(code);
  },
  (err) => {
    process.stderr.write(
      `canlab-mcp: internal error: ${String(err && err.message ? err.message : err).split('\n')[0]}\n`,
    );
    process.exit(70);
  },
);
