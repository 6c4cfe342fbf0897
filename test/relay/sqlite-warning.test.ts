// node:sqlite on Node 22 prints "ExperimentalWarning: SQLite is an experimental feature" once per
// thread that loads it (24 and later do not). The relay (its thread, the store's writer and its
// checkpointer) holds back exactly that warning and passes every other. Run on each supported
// Node: the first test shows what this Node does without the filter, the second checks the filter
// on a warning of the same text whatever this Node emits, the third runs the installed CLI's relay.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { postWithLocalToken, startRelayProcess } from '../support/relay-process.js';
import { projectRoot } from '../support/shared-dir.js';

const major = Number(process.versions.node.split('.')[0]);
const dir = mkdtempSync(join(tmpdir(), 'aep-sqlite-warning-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

test(`Node ${process.version} loading node:sqlite bare: the warning shows on 22 only`, () => {
  const r = spawnSync(process.execPath, ['-e', "process.getBuiltinModule('node:sqlite')"], { encoding: 'utf8' });
  assert.is(r.status, 0, r.stderr);
  if (major === 22) assert.match(r.stderr, 'ExperimentalWarning: SQLite is an experimental feature');
  else assert.not.match(r.stderr, 'ExperimentalWarning');
});

test('the filter holds back that one warning while node:sqlite loads, and passes every other', () => {
  const script = `
    import { openDatabase, withoutSqliteWarning } from ${JSON.stringify(join(projectRoot, 'src', 'relay', 'sqlite.ts'))};
    const SQLITE = 'SQLite is an experimental feature and might change at any time';
    withoutSqliteWarning(() => {
      process.emitWarning(SQLITE, 'ExperimentalWarning');
      process.emitWarning(SQLITE, { type: 'ExperimentalWarning' });
      process.emitWarning('Other is an experimental feature', 'ExperimentalWarning');
      process.emitWarning(SQLITE, 'DeprecationWarning');
    });
    openDatabase(':memory:').close();
    process.emitWarning('after: ' + SQLITE, 'ExperimentalWarning');
  `;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: projectRoot,
    encoding: 'utf8',
  });
  assert.is(r.status, 0, r.stderr);
  const warnings = r.stderr
    .split('\n')
    .filter((l) => /Warning: /.test(l))
    .map((l) => l.replace(/^\(node:\d+\) /, ''));
  assert.equal(warnings, [
    'ExperimentalWarning: Other is an experimental feature',
    'DeprecationWarning: SQLite is an experimental feature and might change at any time',
    'ExperimentalWarning: after: SQLite is an experimental feature and might change at any time',
  ]);
});

test(`aep-steer relay with a file store on Node ${process.version}: no ExperimentalWarning on stderr after a write and a checkpoint`, async () => {
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: dir, AEP_STATE_DIR: join(dir, 'state') };
  for (const k of ['NODE_OPTIONS', 'NODE_NO_WARNINGS', 'AEP_TOKEN']) delete env[k];
  const relay = await startRelayProcess(process.execPath, [join(projectRoot, 'bin', 'aep-steer.js')], {
    ...env,
    AEP_STORE: join(dir, 'relay.db'),
  });
  try {
    const r = await postWithLocalToken(relay.url, join(dir, 'state'));
    assert.is(r.body.stored, 1, 'the writer thread committed the event');
    // The checkpointer's first pass (every 250 ms) has run on its own connection.
    await new Promise((res) => setTimeout(res, 400));
  } finally {
    assert.is(await relay.stop(), 0, relay.stderr());
  }
  assert.match(relay.stderr(), `relay: listening on http://127.0.0.1:`);
  assert.match(relay.stderr(), `store ${join(dir, 'relay.db')}`);
  assert.not.match(relay.stderr(), 'Warning');
});

test.run();
