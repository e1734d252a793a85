#!/usr/bin/env node
// The operator CLI. Node (pinned through the `node` package) runs the TypeScript sources directly.
// Grafast (the internal GraphQL layer) runs in production mode unless told otherwise; saying so
// here keeps its notice about the unset variable out of every command's output.
process.env.GRAPHILE_ENV ??= 'production';
// Older Node cannot load the .ts sources: say so instead of failing on the file extension.
if (Number(process.versions.node.split('.')[0]) < 24) {
  console.error(`svc: needs Node.js 24 or later (this is ${process.version}); \`npm start\` and \`npx svc\` run the project's own`);
  process.exit(1);
}
await import('../src/cli/main.ts');
