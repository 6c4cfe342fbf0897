#!/usr/bin/env node
// Runs the compiled CLI (dist/, built by `npm run build`, which `prepare` runs on install and pack).
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);

// The Node lines package.json's engines declares (`^22.13.0 || ^24.0.0 || >=26.0.0`): checked
// before anything loads, so an old Node gets one line and exit 2 instead of a stack trace from
// a module it lacks. The hook path fails open: the agent gets a neutral answer (exit 0).
const engines = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).engines?.node ?? '';
const unsupported = nodeOutside(engines, process.versions.node);
if (unsupported) {
  process.stderr.write(`aep-steer: Node.js ${process.versions.node} is not supported; ${unsupported}\n`);
  process.exit(args[0] === 'hook' ? 0 : 2);
}

const main = join(root, 'dist', 'cli', 'main.js');
if (!existsSync(main)) {
  process.stderr.write(
    `aep-steer: ${main} is missing; run \`npm run build\` in ${root} (npm ci and npm pack run it)\n`,
  );
  process.exit(1);
}
// `--version` alone needs nothing but the version: answered without loading the command parser.
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  const { VERSION } = await import(pathToFileURL(join(root, 'dist', 'cli', 'usage.js')).href);
  process.stdout.write(`${VERSION}\n`);
} else {
  await import(pathToFileURL(main).href);
}

/** Why `version` falls outside `range` (clauses `^X.Y.Z` or `>=X.Y.Z` joined by `||`), or ''. */
function nodeOutside(range, version) {
  const parse = (v) => v.split('.').map((n) => Number.parseInt(n, 10) || 0);
  const atLeast = (a, b) => (a[0] !== b[0] ? a[0] > b[0] : a[1] !== b[1] ? a[1] > b[1] : a[2] >= b[2]);
  const clauses = range
    .split('||')
    .map((c) => c.trim())
    .filter(Boolean);
  const have = parse(version);
  const words = [];
  for (const c of clauses) {
    const m = /^(\^|>=)\s*(\d+(?:\.\d+){0,2})$/.exec(c);
    if (!m) return ''; // a range this check cannot read is left to npm
    const want = parse(m[2]);
    if (m[1] === '^' ? have[0] === want[0] && atLeast(have, want) : atLeast(have, want)) return '';
    const exact = want[1] || want[2] ? ` (${m[2]} or later)` : '';
    words.push(m[1] === '^' ? `${want[0]}${exact}` : `${want[0]}${exact} or newer`);
  }
  if (words.length === 0) return '';
  return (
    `use Node.js ${words.join(', ')} (package.json engines: ${range}); ` +
    'in a clone of aep-steering, eval "$(scripts/node-line.sh 24)" puts Node.js 24 on PATH for this shell, ' +
    'and scripts/node-line.sh --profile 24 keeps it (and aep-steer) there for new terminals'
  );
}
