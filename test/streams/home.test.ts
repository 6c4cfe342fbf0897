// D45: the adapter's home session. A spawn sent to it runs the spawner; the ack names the new
// session, which is described with who spawned it; refusals are acks with their own code and start
// nothing; the adapter's close stops every worker and ends it on the stream; a restart re-acks a
// repeated spawn byte for byte from the log and starts nothing again.
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { command } from '../../src/protocol/build.js';
import type { AepEvent } from '../../src/protocol/index.js';
import { SPAWN_PARENT_ATTR } from '../../src/protocol/types.js';
import { homeSessionOf } from '../../src/streams/home.js';
import { realRoots, WORKTREE_DIR } from '../../src/streams/spawn-place.js';
import { spawner, type Launcher } from '../../src/streams/spawner.js';
import { adapter, tempLog, type TestAdapter } from '../support/adapter.js';
import { fakeSurface } from '../support/fake-surface.js';
import { scratchRepo } from '../support/scratch-repo.js';
import { until } from '../support/until.js';

const base = realRoots([mkdtempSync(join(tmpdir(), 'aep-home-'))]).roots[0]!;
const root = join(base, 'root');
const repo = scratchRepo(join(root, 'repo'));
mkdirSync(join(base, 'outside'));
const HOME = homeSessionOf('codex', 'test-host');

function launcher() {
  const asked: string[] = [];
  const stopped: string[] = [];
  const launch: Launcher = async (req) => {
    asked.push(req.cwd);
    const session = `w-${asked.length}`;
    let end!: () => void;
    const ended = new Promise<void>((r) => (end = r));
    return {
      session,
      ended,
      async stop() {
        stopped.push(session);
        end();
      },
    };
  };
  return { launch, asked, stopped };
}

async function spawning(max = 1, logPath = tempLog()) {
  const l = launcher();
  const a = await adapter({
    surface: fakeSurface({ token: 'codex', steeringType: 'x.codex.control.instruct' }),
    logPath,
    spawner: spawner({ roots: [root], max, launch: l.launch }),
  });
  // The home session's first event of this start (it may be out before anyone listens).
  await until(() => a.events.some((e) => e.session === HOME && e.type === 'x.codex.session.described'), 'home');
  return { a, l };
}

const spawnCmd = (id: string, data: Record<string, unknown>, type = 'x.codex.control.spawn') =>
  command({ agent: 'orch', host: 'h' }, HOME, { type, id, data });

/** Sends and returns the ack the home session answers with. */
async function ask(a: TestAdapter, c: ReturnType<typeof spawnCmd>): Promise<AepEvent> {
  const ack = a.next((e) => e.cause === c.id && /^control\.(accepted|rejected)$/.test(e.type));
  a.handle.command(c);
  return ack;
}

test('a spawn: the ack names the session and worktree, the session is described with its spawner, close ends it', async () => {
  const { a, l } = await spawning();
  const c = spawnCmd('SPAWN1', { prompt: 'do it', cwd: repo, worktree: true });
  const described = a.next((e) => e.session === 'w-1' && e.type === 'x.codex.session.described');
  const ack = await ask(a, c);
  assert.is(ack.type, 'control.accepted');
  assert.is(ack.session, HOME);
  assert.is(ack.data?.['session'], 'w-1');
  assert.is(ack.data?.['worktree'], join(root, WORKTREE_DIR, 'aep-spawn1'));
  assert.equal((await described).data?.['spawned_by'], { identity: 'orch', command: 'SPAWN1' });
  assert.equal(l.asked, [join(root, WORKTREE_DIR, 'aep-spawn1')]);
  // The same command again: the same ack, byte for byte, and no second worker.
  const again = await ask(a, c);
  assert.equal(again, ack);
  assert.is(l.asked.length, 1);
  const ended = a.next((e) => e.session === 'w-1' && e.type === 'session.ended');
  await a.handle.close();
  assert.ok(await ended);
  assert.equal(l.stopped, ['w-1']);
});

test('the parent the relay named (spawnparent) is in spawned_by; without it there is none', async () => {
  const { a } = await spawning(2);
  const c = { ...spawnCmd('PARENT1', { prompt: 'do it', cwd: repo }), [SPAWN_PARENT_ATTR]: 'lead-1' };
  const described = a.next((e) => e.session === 'w-1' && e.type === 'x.codex.session.described');
  assert.is((await ask(a, c)).type, 'control.accepted');
  assert.equal((await described).data?.['spawned_by'], { identity: 'orch', command: 'PARENT1', parent: 'lead-1' });
  await a.handle.close();
});

test('refusals: each its own code, nothing started', async () => {
  const { a, l } = await spawning(1);
  const code = (e: AepEvent) => [e.type, e.data?.['reason'], (e as { code?: string }).code];
  assert.equal(code(await ask(a, spawnCmd('R1', { prompt: 'x', cwd: join(base, 'outside') }))), [
    'control.rejected',
    'invalid',
    'cwd-outside-roots',
  ]);
  assert.equal(code(await ask(a, spawnCmd('R2', { prompt: ' ', cwd: repo }))), [
    'control.rejected',
    'invalid',
    'spawn-invalid',
  ]);
  assert.equal(code(await ask(a, spawnCmd('R3', { text: 'x' }, 'x.codex.control.instruct'))), [
    'control.rejected',
    'unsupported',
    'home-spawn-only',
  ]);
  assert.is(l.asked.length, 0, 'nothing started');
  assert.is((await ask(a, spawnCmd('R4', { prompt: 'x', cwd: repo }))).type, 'control.accepted');
  assert.equal(code(await ask(a, spawnCmd('R5', { prompt: 'y', cwd: repo }))), [
    'control.rejected',
    'busy',
    'spawn-cap',
  ]);
  assert.is(l.asked.length, 1, 'the cap started nothing');
  await a.handle.close();
});

test('a restart: a repeated spawn gets its first ack again from the log, and nothing starts twice', async () => {
  const logPath = tempLog();
  const first = await spawning(2, logPath);
  const c = spawnCmd('AGAIN1', { prompt: 'x', cwd: repo });
  const ack = await ask(first.a, c);
  await first.a.handle.close();
  const second = await spawning(2, logPath);
  const re = await ask(second.a, c);
  assert.equal(re, ack);
  assert.is(second.l.asked.length, 0);
  // The worker ended with the first adapter, once: the restart ends nothing again.
  assert.is(second.a.events.filter((e) => e.type === 'session.ended').length, 0);
  await second.a.handle.close();
});

test('a spawn still starting when the adapter stops: rejected spawn-failed, said once', async () => {
  const a = await adapter({
    surface: fakeSurface({ token: 'codex', steeringType: 'x.codex.control.instruct' }),
    // A worker that never comes up: its answer is still owed when the adapter stops.
    spawner: spawner({ roots: [root], launch: () => new Promise(() => undefined) }),
  });
  await until(() => a.events.some((e) => e.session === HOME), 'home');
  const c = spawnCmd('SLOW1', { prompt: 'x', cwd: repo });
  const rejected = a.next((e) => e.cause === c.id && e.type === 'control.rejected');
  a.handle.command(c);
  await a.handle.close();
  const r = await rejected;
  assert.is((r as { code?: string }).code, 'spawn-failed');
  assert.match(String(r.data?.['detail']), /stopped before the worker started/);
});

test.run();
