// D45 in the audit: a worker tree as an adapter records it (the home session described at each
// start, the spawn, its ack naming the worker, the worker described with spawned_by, its end) is
// clean; each breach is its own rule: a spawned session that never names its spawner
// (spawn-unnamed), a spawner the record does not show sending that spawn, or a parent the relay
// did not set (spawn-right-unshown), and a worker still open when its adapter started again
// (spawn-outlived-adapter).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { auditFiles } from '../../src/audit/audit.js';
import { SessionEmitter, command, type AepEvent } from '../../src/protocol/index.js';
import { SPAWN_PARENT_ATTR } from '../../src/protocol/types.js';
import { homeSessionOf } from '../../src/streams/home.js';
import { realRoots } from '../../src/streams/spawn-place.js';
import { spawner, type Launcher } from '../../src/streams/spawner.js';
import { adapter } from '../support/adapter.js';
import { fakeSurface } from '../support/fake-surface.js';
import { until } from '../support/until.js';

const dir = mkdtempSync(join(tmpdir(), 'aep-spawn-audit-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

const HOME = 'aep-home-codex-h';
const DESCRIBED = 'x.codex.session.described';

interface Tree {
  events: AepEvent[];
  spawn: AepEvent;
  described: AepEvent;
  ended: AepEvent;
  /** The home session described again: the adapter's next start, with the same emitter's epoch + 1. */
  restart(): AepEvent;
}

/** One worker spawned by `orch` (with the relay's parent `lead-1` when `parent`), then ended. */
function tree(opts: { parent?: boolean; by?: string } = {}): Tree {
  let at = Date.parse('2026-12-01T10:00:00.000Z');
  const home = new SessionEmitter({ agent: 'codex', session: HOME, host: 'h' });
  const worker = new SessionEmitter({ agent: 'codex', session: 'w-1', host: 'h' });
  const spawn: AepEvent = {
    ...command({ agent: 'orch', host: 'h' }, HOME, {
      type: 'x.codex.control.spawn',
      data: { prompt: 'go', cwd: '/w' },
      capture: 'redacted',
      at: at++,
    }),
    ...(opts.parent === true ? { [SPAWN_PARENT_ATTR]: 'lead-1' } : {}),
  };
  const by = { identity: opts.by ?? 'orch', command: spawn.id, ...(opts.parent === true ? { parent: 'lead-1' } : {}) };
  const described = worker.emit({ type: DESCRIBED, data: { cwd: '/w', spawned_by: by }, at: at++ });
  const ended = worker.emit({ type: 'session.ended', data: { reason: 'killed' }, at: at + 10 });
  const events = [
    home.emit({ type: DESCRIBED, data: { lanes: ['spawn'] }, at: at++ }),
    spawn,
    home.emit({ type: 'control.accepted', cause: spawn.id, data: { session: 'w-1', cwd: '/w' }, at: at++ }),
    described,
    ended,
  ];
  const later = new SessionEmitter({ agent: 'codex', session: HOME, host: 'h', epoch: 1 });
  return {
    events,
    spawn,
    described,
    ended,
    restart: () => later.emit({ type: DESCRIBED, data: { lanes: ['spawn'] }, at: at + 20 }),
  };
}

let n = 0;
async function spawnRules(events: AepEvent[]): Promise<{ rule: string; message: string }[]> {
  const file = join(dir, `log-${n++}.jsonl`);
  writeFileSync(file, `${events.map((e) => JSON.stringify(e)).join('\n')}\n`);
  return (await auditFiles([file])).violations.filter((v) => v.rule.startsWith('spawn-'));
}

test('a worker tree as recorded is clean: spawned, named, parent as the relay set it, ended before the restart', async () => {
  const t = tree({ parent: true });
  assert.equal(await spawnRules([...t.events, t.restart()]), []);
  assert.equal(await spawnRules(tree().events), []);
});

test('a spawned session never described with its spawner is spawn-unnamed', async () => {
  const t = tree();
  const got = await spawnRules(t.events.filter((e) => e !== t.described));
  assert.equal(
    got.map((v) => v.rule),
    ['spawn-unnamed'],
  );
  assert.match(got[0]!.message, /w-1 was spawned .* but never described with spawned_by/);
});

test('a spawner the record does not show sending the spawn is spawn-right-unshown', async () => {
  const forged = tree({ by: 'mallory' });
  assert.equal(
    (await spawnRules(forged.events)).map((v) => [v.rule, v.message]),
    [['spawn-right-unshown', `session w-1: spawned_by names mallory, but ${forged.spawn.id} was sent by orch`]],
  );
  const noCommand = tree();
  assert.equal(
    (await spawnRules(noCommand.events.filter((e) => e !== noCommand.spawn))).map((v) => v.rule),
    ['spawn-right-unshown'],
  );
});

test('a parent the relay did not set on the spawn is spawn-right-unshown', async () => {
  const t = tree();
  const claimed = {
    ...t.described,
    data: { ...t.described.data, spawned_by: { identity: 'orch', command: t.spawn.id, parent: 'someone-else' } },
  };
  const got = await spawnRules(t.events.map((e) => (e === t.described ? claimed : e)));
  assert.equal(
    got.map((v) => v.rule),
    ['spawn-right-unshown'],
  );
  assert.match(got[0]!.message, /names parent someone-else, the relay set none/);
});

test('a worker still open when its adapter started again is spawn-outlived-adapter', async () => {
  const t = tree();
  const open = t.events.filter((e) => e !== t.ended);
  assert.equal(
    (await spawnRules([...open, t.restart()])).map((v) => v.rule),
    ['spawn-outlived-adapter'],
  );
  // Ended only after the new start: still too late.
  assert.equal(
    (await spawnRules([...open, t.restart(), t.ended])).map((v) => v.rule),
    ['spawn-outlived-adapter'],
  );
  // No restart on the record: the adapter may still run, nothing to say yet.
  assert.equal(await spawnRules(open), []);
});

test("an adapter's own log of a spawn, its worker and the stop audits clean, the machine replay included", async () => {
  const root = realRoots([mkdtempSync(join(dir, 'root-'))]).roots[0]!;
  let end!: () => void;
  const launch: Launcher = async () => ({
    session: 'w-real',
    ended: new Promise<void>((r) => (end = r)),
    stop: async () => end(),
  });
  const a = await adapter({
    surface: fakeSurface({ token: 'codex', steeringType: 'x.codex.control.instruct' }),
    spawner: spawner({ roots: [root], launch }),
  });
  const home = homeSessionOf('codex', 'test-host');
  await until(() => a.events.some((e) => e.session === home), 'home');
  const c = command({ agent: 'orch', host: 'h' }, home, {
    type: 'x.codex.control.spawn',
    data: { prompt: 'x', cwd: root },
  });
  const ack = a.next((e) => e.cause === c.id);
  a.handle.command(c);
  assert.is((await ack).type, 'control.accepted');
  await a.handle.close();
  const r = await auditFiles([a.logPath]);
  assert.equal(r.violations, []);
});

test.run();
