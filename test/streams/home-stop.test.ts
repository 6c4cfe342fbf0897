// D45: stopping one worker while its adapter runs. A `control.cancel {scope:"session"}` sent to a
// worker is its home's: acked at once on the worker's session, the worker's process stopped, and
// its `session.ended` (killed) caused by the stop and naming who stopped it; the adapter goes on.
// A session that is no running worker is refused `end-not-spawned`, a second stop while one runs
// `end-under-way`, and a resend of the stop gets the very same ack (D4).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { command } from '../../src/protocol/build.js';
import type { AepEvent } from '../../src/protocol/index.js';
import { homeSessionOf } from '../../src/streams/home.js';
import { realRoots } from '../../src/streams/spawn-place.js';
import { spawner, type Launcher } from '../../src/streams/spawner.js';
import { adapter, type TestAdapter } from '../support/adapter.js';
import { fakeSurface } from '../support/fake-surface.js';
import { until } from '../support/until.js';

const root = realRoots([mkdtempSync(join(tmpdir(), 'aep-home-stop-'))]).roots[0]!;
const HOME = homeSessionOf('codex', 'test-host');

/** Workers whose stop is released by the test, so a second stop can arrive while one runs. */
function launcher() {
  const stopped: string[] = [];
  const release: (() => void)[] = [];
  let n = 0;
  const launch: Launcher = async () => {
    const session = `w-${++n}`;
    let end!: () => void;
    const ended = new Promise<void>((r) => (end = r));
    return {
      session,
      ended,
      async stop() {
        stopped.push(session);
        release.push(end);
      },
    };
  };
  return { launch, stopped, release };
}

async function withWorker() {
  const l = launcher();
  const a = await adapter({
    surface: fakeSurface({ token: 'codex', steeringType: 'x.codex.control.instruct' }),
    spawner: spawner({ roots: [root], max: 2, launch: l.launch }),
  });
  await until(() => a.events.some((e) => e.session === HOME && e.type === 'x.codex.session.described'), 'home');
  const spawn = command({ agent: 'orch', host: 'h' }, HOME, {
    type: 'x.codex.control.spawn',
    id: 'SPAWN1',
    data: { prompt: 'work', cwd: root },
  });
  const ack = a.next((e) => e.cause === 'SPAWN1' && e.type === 'control.accepted');
  a.handle.command(spawn);
  assert.is((await ack).data?.['session'], 'w-1');
  return { a, l };
}

const stopCmd = (session: string, id: string, agent = 'lead') =>
  command({ agent, host: 'h' }, session, { type: 'control.cancel', id, data: { scope: 'session' } });

async function send(a: TestAdapter, c: ReturnType<typeof stopCmd>): Promise<AepEvent> {
  const ack = a.next((e) => e.cause === c.id && /^control\.(accepted|rejected)$/.test(e.type));
  a.handle.command(c);
  return ack;
}

test('a stop: acked on the worker, its process stopped, session.ended killed naming who and caused by it', async () => {
  const { a, l } = await withWorker();
  const c = stopCmd('w-1', 'STOP1');
  const ack = await send(a, c);
  assert.is(ack.type, 'control.accepted');
  assert.is(ack.session, 'w-1');
  await until(() => l.stopped.includes('w-1'), 'the worker is asked to stop');
  // A resend while it stops: the same ack bytes, no second stop.
  assert.equal(await send(a, c), ack);
  // Another stop meanwhile is told one is under way.
  const other = await send(a, stopCmd('w-1', 'STOP2'));
  assert.equal(
    [other.type, (other as { code?: string }).code, other.data?.['reason']],
    ['control.rejected', 'end-under-way', 'busy'],
  );
  const ended = a.next((e) => e.session === 'w-1' && e.type === 'session.ended');
  l.release[0]!();
  const e = await ended;
  assert.is(e.cause, 'STOP1');
  assert.equal(e.data, { reason: 'killed', stopped_by: { identity: 'lead', command: 'STOP1' } });
  assert.equal(l.stopped, ['w-1']);
  // The adapter goes on: the home still spawns.
  const next = command({ agent: 'orch', host: 'h' }, HOME, {
    type: 'x.codex.control.spawn',
    id: 'SPAWN2',
    data: { prompt: 'more', cwd: root },
  });
  const spawned = a.next((x) => x.cause === 'SPAWN2' && x.type === 'control.accepted');
  a.handle.command(next);
  assert.is((await spawned).data?.['session'], 'w-2');
  const closing = a.handle.close();
  await until(() => l.release.length === 2, 'the close stops the second worker');
  l.release[1]!();
  await closing;
});

test('a stop of a session that is no running worker: end-not-spawned, nothing stopped', async () => {
  const { a, l } = await withWorker();
  const ack = await send(a, stopCmd('someone-else', 'STOP3'));
  assert.equal(
    [ack.type, (ack as { code?: string }).code, ack.data?.['reason']],
    ['control.rejected', 'end-not-spawned', 'unsupported'],
  );
  assert.is(ack.session, 'someone-else');
  assert.equal(l.stopped, []);
  const closing = a.handle.close();
  await until(() => l.release.length === 1, 'the close stops the worker');
  l.release[0]!();
  await closing;
});

test.run();
