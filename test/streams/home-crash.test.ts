// D45 with D11/D12: an adapter that dies after a spawn is logged and before its answer. The next
// start gives that command one true outcome: `control.rejected` `spawn-failed` saying no worker of
// it is on record (never "not started", which the log cannot know), once; the
// same command sent again gets those bytes again and starts nothing.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { command } from '../../src/protocol/build.js';
import type { AepEvent } from '../../src/protocol/index.js';
import { commandKey } from '../../src/machines/gate.js';
import { ActorHost } from '../../src/streams/actor-host.js';
import { HomeSession, homeSessionOf } from '../../src/streams/home.js';
import { openEventLog, readEventLog } from '../../src/streams/log.js';
import { realRoots } from '../../src/streams/spawn-place.js';
import { spawner, type Launcher } from '../../src/streams/spawner.js';
import { adapter, tempLog } from '../support/adapter.js';
import { fakeSurface } from '../support/fake-surface.js';
import { until } from '../support/until.js';

const root = realRoots([mkdtempSync(join(tmpdir(), 'aep-home-crash-'))]).roots[0]!;
const HOME = homeSessionOf('codex', 'test-host');
const surface = () => fakeSurface({ token: 'codex', steeringType: 'x.codex.control.instruct' });
/** The events in the log at `path` (a restart's first events may be out before a test listens). */
const logged = (path: string): AepEvent[] =>
  readEventLog(path).records.flatMap((r) => (r.k === 'ev' ? [r.e] : [])) as AepEvent[];
const spawnCmd = (id: string) =>
  command({ agent: 'orch', host: 'h' }, HOME, { type: 'x.codex.control.spawn', id, data: { prompt: 'x', cwd: root } });

const launch: Launcher = async () => {
  throw new Error('nothing is started in these tests');
};

test('a spawn logged but unanswered at a crash is rejected spawn-failed once on restart, and a resend starts nothing', async () => {
  const logPath = tempLog();
  // The dead process: the spawn is durable in its log, its answer never came.
  const { log } = openEventLog(logPath);
  const host = new ActorHost({
    surface: surface(),
    instruct: true,
    host: 'test-host',
    home: new HomeSession(HOME, 'codex'),
  });
  const stepped = host.step({ kind: 'command', session: HOME, at: 1000, command: spawnCmd('CRASH1') });
  assert.equal(
    stepped.effects.map((e) => e.kind),
    ['spawn'],
    'the spawn was under way',
  );
  log.append(stepped.records);
  log.close();

  const asked: string[] = [];
  const counting: Launcher = async (req) => {
    asked.push(req.cwd);
    return { session: 'w-x', ended: new Promise(() => undefined), stop: async () => undefined };
  };
  const b = await adapter({ surface: surface(), logPath, spawner: spawner({ roots: [root], launch: counting }) });
  try {
    await until(() => logged(logPath).some((e) => e.cause === 'CRASH1'), 'the owed answer');
    const answers = logged(logPath).filter((e) => e.cause === 'CRASH1');
    assert.equal(
      answers.map((e) => [e.type, (e as { code?: string }).code]),
      [['control.rejected', 'spawn-failed']],
    );
    assert.match(
      String(answers[0]!.data?.['detail']),
      /ended before it answered this spawn, so no worker of it is on record/,
    );
    const again = b.next((e) => e.cause === 'CRASH1');
    b.handle.command(spawnCmd('CRASH1'));
    assert.is(JSON.stringify(await again), JSON.stringify(answers[0]));
    assert.equal(asked, [], 'nothing started for it, before or after the resend');
  } finally {
    await b.handle.close();
  }
  // In the log once: a third start owes nothing more.
  assert.is(logged(logPath).filter((e) => e.cause === 'CRASH1').length, 1);
  const opened = () => logged(logPath).filter((e) => e.session === HOME && e.type === 'x.codex.session.described');
  const before = opened().length;
  const c = await adapter({ surface: surface(), logPath, spawner: spawner({ roots: [root], launch }) });
  await until(() => opened().length > before, 'the third start');
  await c.handle.close();
  assert.is(logged(logPath).filter((e) => e.cause === 'CRASH1').length, 1);
});

test('a worker answered before the crash ends on the stream once at restart, as killed', async () => {
  const logPath = tempLog();
  const { log } = openEventLog(logPath);
  const home = new HomeSession(HOME, 'codex');
  const host = new ActorHost({ surface: surface(), instruct: true, host: 'test-host', home });
  log.append(host.step({ kind: 'command', session: HOME, at: 1000, command: spawnCmd('CRASH2') }).records);
  const answered = {
    type: 'spawn.answered',
    at: 1100,
    key: commandKey(spawnCmd('CRASH2')),
    command: 'CRASH2',
    answer: { ok: true, session: 'w-alive', cwd: root },
    by: { identity: 'orch', command: 'CRASH2' },
  };
  log.append(host.step({ kind: 'input', session: HOME, input: answered as never }).records);
  log.close();
  const ends = () => logged(logPath).filter((e) => e.session === 'w-alive' && e.type === 'session.ended');
  const b = await adapter({ surface: surface(), logPath, spawner: spawner({ roots: [root], launch }) });
  await until(() => ends().length > 0, 'the end');
  await b.handle.close();
  assert.equal(
    ends().map((e) => e.data?.['reason']),
    ['killed'],
  );
});

test.run();
