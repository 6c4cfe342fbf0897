#!/usr/bin/env node
// Runs the TypeScript sources through tsx, so a fresh clone works right after `npm ci`.
import { fileURLToPath, pathToFileURL } from 'node:url';
import { dirname, join } from 'node:path';
import { register } from 'tsx/esm/api';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
register();
await import(pathToFileURL(join(root, 'src', 'cli', 'main.ts')).href);
