#!/usr/bin/env node
// The `gw` command. Runs the compiled CLI when `npm run build` has been run, else the TypeScript source through tsx.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const built = new URL('../dist/src/cli/gw-cli.js', import.meta.url);
if (existsSync(fileURLToPath(built))) {
  await import(built.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(new URL('../src/cli/gw-cli.ts', import.meta.url).href);
}
