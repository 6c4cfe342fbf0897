#!/usr/bin/env node
// Build: compiles src/ to dist/ (tsc), then copies what tsc does not carry (the command-hook
// shim), so the installed package runs plain JavaScript and needs no TypeScript loader.
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
rmSync(join(root, 'dist'), { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const r = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
if (r.status !== 0) process.exit(r.status ?? 1);
const shim = ['adapters', 'shim', 'aep-steer-hook.sh'];
mkdirSync(join(root, 'dist', ...shim.slice(0, -1)), { recursive: true });
copyFileSync(join(root, 'src', ...shim), join(root, 'dist', ...shim));
chmodSync(join(root, 'dist', ...shim), 0o755);
