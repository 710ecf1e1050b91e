#!/usr/bin/env node
'use strict';
// Stdout carries the MCP protocol in stdio modes, so everything for a human goes to stderr.
const { runMcpLauncher } = require('./entry').loadEntry('mcp/launcher', 'canlab-mcp');

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
