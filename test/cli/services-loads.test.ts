// `status` and `down` are what a person types beside an agent: like `--version`, they load no
// ws, SQLite, XState, Ajv, RxJS or inspector (the command's module alone, as the catalogue loads it).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..', '..');
const bin = join(root, 'bin', 'aep-steer.js');
const tracer = join(root, 'test', 'support', 'trace-loads.mjs');
const HEAVY = [
  '/node_modules/ws/',
  '/node_modules/better-sqlite3/',
  '/node_modules/xstate/',
  '/node_modules/ajv/',
  '/node_modules/rxjs/',
  '/node_modules/@statelyai/',
];

for (const [label, args, status] of [
  ['status', ['status'], 0],
  ['down', ['down'], 0],
  ['up with a bad port', ['up', '--relay-port', 'x'], 1],
] as const) {
  test(`${label} loads no ws, SQLite, XState, Ajv, RxJS or inspector`, () => {
    const dir = mkdtempSync(join(tmpdir(), 'aep-loads-'));
    const trace = join(dir, 'loads.txt');
    try {
      const r = spawnSync(process.execPath, ['--import', tracer, bin, ...args], {
        encoding: 'utf8',
        env: { ...process.env, AEP_TRACE_LOADS: trace, AEP_STATE_DIR: dir },
        timeout: 30_000,
      });
      assert.is(r.status, status, r.stderr);
      const urls = existsSync(trace) ? readFileSync(trace, 'utf8').split('\n').filter(Boolean) : [];
      assert.ok(
        urls.some((u) => u.endsWith('/cli/services-command.js')),
        `the services module was loaded: ${urls.length} urls`,
      );
      const heavy = urls.filter((u) => HEAVY.some((h) => u.includes(h)));
      assert.equal(heavy, [], `${label} loaded ${heavy.join(', ')}`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

test.run();
