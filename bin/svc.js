#!/usr/bin/env node
// The operator CLI. Node (pinned through the `node` package) runs the TypeScript sources directly.
// Grafast (the internal GraphQL layer) runs in production mode unless told otherwise; saying so
// here keeps its notice about the unset variable out of every command's output.
process.env.GRAPHILE_ENV ??= 'production';
await import('../src/cli/main.ts');
