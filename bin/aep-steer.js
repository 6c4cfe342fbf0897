#!/usr/bin/env node
// Runs the compiled CLI (dist/, built by `npm run build`, which `prepare` runs on install and pack).
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const main = join(root, 'dist', 'cli', 'main.js');
if (!existsSync(main)) {
  process.stderr.write(`aep-steer: ${main} is missing; run \`npm run build\` in ${root} (npm ci and npm pack run it)\n`);
  process.exit(1);
}
await import(pathToFileURL(main).href);
