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
// `--version` alone needs nothing but the version: answered without loading the command parser.
const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  const { VERSION } = await import(pathToFileURL(join(root, 'dist', 'cli', 'usage.js')).href);
  process.stdout.write(`${VERSION}\n`);
} else {
  await import(pathToFileURL(main).href);
}
