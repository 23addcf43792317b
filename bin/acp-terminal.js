#!/usr/bin/env node
// The `acp-terminal` command (`acp-terminal mcp [flags]`): see lib/mcp-cli.js and docs/mcp.md.
'use strict';
require('../lib/mcp-cli.js')
  .main(process.argv.slice(2))
  .then((code) => process.exit(code))
  .catch((error) => {
    process.stderr.write(`acp-terminal: ${(error && error.stack) || error}\n`);
    process.exit(1);
  });
