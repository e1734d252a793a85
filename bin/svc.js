#!/usr/bin/env node
// The operator CLI. Node (pinned through the `node` package) runs the TypeScript sources directly.
import '../src/cli/main.ts';
