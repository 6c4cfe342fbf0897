import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { plain } from '../../src/audit/paint.js';
import { renderRows } from '../../src/cli/sessions-command.js';
import { treeRows } from '../../src/cli/sessions-tree.js';
import { rowsFrom } from '../../src/consumer/roster.js';
import { SessionEmitter } from '../../src/protocol/index.js';
import { SessionSummaries } from '../../src/relay/session-summary.js';

test('the relay keeps the first spawned_by a session was described with; a bad one says nothing', () => {
  const s = new SessionSummaries(() => []);
  const a = new SessionEmitter({ agent: 'codex', session: 'w1', host: 'h' });
  s.observe(a.emit({ type: 'session.started' }));
  s.observe(
    a.emit({
      type: 'x.codex.session.described',
      data: { spawned_by: { identity: 'orchestrator', command: 'CMD1', parent: 'boss' } },
    }),
  );
  s.observe(a.emit({ type: 'x.codex.session.described', data: { spawned_by: { identity: 'other', command: 'X' } } }));
  assert.equal(s.about('w1').spawnedBy, { identity: 'orchestrator', command: 'CMD1', parent: 'boss' });
  const b = new SessionEmitter({ agent: 'codex', session: 'w2', host: 'h' });
  s.observe(b.emit({ type: 'x.codex.session.described', data: { spawned_by: { identity: 7 } } }));
  assert.is(s.about('w2').spawnedBy, undefined);
});

const entry = (session: string, spawned_by?: { identity: string; command: string; parent?: string }) => ({
  session,
  agent: 'codex',
  ...(spawned_by === undefined ? {} : { spawned_by }),
});

test('--tree: workers under their parent, depth first; a worker spawned from outside names its spawner', () => {
  const rows = rowsFrom([
    entry('w-b1', { identity: 'op', command: 'C3', parent: 'w-b' }),
    entry('boss'),
    entry('w-a', { identity: 'op', command: 'C1', parent: 'boss' }),
    entry('script-worker', { identity: 'ci-bot', command: 'C9' }),
    entry('w-b', { identity: 'op', command: 'C2', parent: 'boss' }),
    entry('orphan', { identity: 'op', command: 'C4', parent: 'gone' }),
  ]);
  assert.equal(rows[0]!.spawnedBy, { identity: 'op', command: 'C3', parent: 'w-b' });
  assert.equal(
    treeRows(rows).map((r) => r.session),
    ['boss', '└ w-a', '└ w-b', '  └ w-b1', 'script-worker (spawned by ci-bot)', 'orphan (spawned by op in gone)'],
  );
  const table = renderRows(treeRows(rows), plain, { now: 0 });
  assert.match(table, /\n {2}└ w-b1 /);
});

test('--tree: sessions that name each other are each listed once', () => {
  const rows = rowsFrom([
    entry('x', { identity: 'op', command: 'C1', parent: 'y' }),
    entry('y', { identity: 'op', command: 'C2', parent: 'x' }),
  ]);
  assert.equal(
    treeRows(rows).map((r) => r.session),
    ['x (spawned by op in y)', '└ y'],
  );
});

test.run();
