// The CLI loads only what a command line needs (lazy imports per subcommand): `--version`,
// `--help` and instruct's argument errors start without ws, SQLite, XState or Ajv, which cost
// most of a start (the CLI bench's `cli-version` figure measures the time).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tableFor, vendorTokens } from '../../src/adapters/registry.js';

const root = join(import.meta.dirname, '..', '..');
const bin = join(root, 'bin', 'aep-steer.js');
const tracer = join(root, 'test', 'support', 'trace-loads.mjs');
const HEAVY = [
  '/node_modules/ws/',
  '/dist/relay/sqlite.js',
  '/node_modules/xstate/',
  '/node_modules/ajv/',
  '/node_modules/rxjs/',
  '/node_modules/@statelyai/',
];

function loadsOf(
  args: string[],
  input?: string,
): { urls: string[]; status: number | null; stderr: string; stdout: string } {
  const dir = mkdtempSync(join(tmpdir(), 'aep-loads-'));
  const trace = join(dir, 'loads.txt');
  try {
    const r = spawnSync(process.execPath, ['--import', tracer, bin, ...args], {
      encoding: 'utf8',
      env: { ...process.env, AEP_TRACE_LOADS: trace, AEP_STATE_DIR: dir },
      timeout: 30_000,
      ...(input === undefined ? {} : { input }),
    });
    const urls = existsSync(trace) ? readFileSync(trace, 'utf8').split('\n').filter(Boolean) : [];
    return { urls, status: r.status, stderr: r.stderr, stdout: r.stdout };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

for (const [label, args, status] of [
  ['--version', ['--version'], 0],
  ['--help', ['--help'], 0],
  ['instruct without --session', ['instruct', 'do it'], 2],
  ['instruct without text', ['instruct', '--session', 's1'], 2],
] as const) {
  test(`${label} loads no ws, SQLite, XState, Ajv, RxJS or inspector`, () => {
    const r = loadsOf([...args]);
    assert.is(r.status, status, r.stderr);
    assert.ok(
      r.urls.some((u) => u.includes('/cli/')),
      `the tracer saw the CLI load: ${r.urls.length} urls`,
    );
    const heavy = r.urls.filter((u) => HEAVY.some((h) => u.includes(h)));
    assert.equal(heavy, [], `${label} loaded ${heavy.join(', ')}`);
  });
}

// `aep-steer hook` runs on every hook of a vendor without curl: it loads its own vendor's table,
// never the registry (which loads every vendor, OpenHands' bridge and the Cline hub included).
// Every vendor in the registry; those observed by hooks (a bridge's vendor has no hook to run).
const VENDOR_MODULES = vendorTokens();
for (const vendor of VENDOR_MODULES.filter((v) => tableFor(v)?.source === undefined)) {
  test(`hook ${vendor} loads its own vendor table only, and no ws, SQLite, XState, Ajv or RxJS`, () => {
    // Port 1: nothing listens, so the hook fails open with the neutral reply after the whole path ran.
    const r = loadsOf(
      ['hook', vendor, '--url', 'http://127.0.0.1:1/hook/x', '--timeout', '5'],
      '{"hook_event_name":"PreToolUse"}',
    );
    assert.is(r.status, 0, r.stderr);
    assert.match(r.stderr, /no adapter is listening/);
    assert.ok(
      r.urls.some((u) => u.endsWith(`/adapters/${vendor}/table.js`)),
      `${vendor}'s table was loaded`,
    );
    const heavy = r.urls.filter((u) => HEAVY.some((h) => u.includes(h)));
    assert.equal(heavy, [], `hook ${vendor} loaded ${heavy.join(', ')}`);
    const others = r.urls.filter(
      (u) =>
        VENDOR_MODULES.some((v) => v !== vendor && u.endsWith(`/adapters/${v}/table.js`)) ||
        u.endsWith('/adapters/registry.js'),
    );
    assert.equal(others, [], `hook ${vendor} loaded other vendors' tables`);
  });
}

test('the tracer does see heavy modules when a command needs them', () => {
  const r = loadsOf(['audit', join(root, 'no-such-log.jsonl')]);
  assert.ok(
    r.urls.some((u) => HEAVY.some((h) => u.includes(h))),
    r.urls.filter((u) => u.includes('node_modules')).join('\n'),
  );
});

test.run();
