// D45 through the relay: `aep-steer spawn` against a real relay (a tokens file) and an adapter with
// a spawner whose launcher is a stand-in. Spawned: the session id and worktree printed, exit 0.
// Each refusal its own code and exit, and nothing started or made: no spawn right (the relay),
// no adapter that spawns, a cwd outside the roots, `..`, a symlink escape, a worktree in a
// directory that is no repository, past --max-spawned.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { runSpawn, SPAWN_EXIT } from '../../src/cli/spawn-command.js';
import { loadTokensFile } from '../../src/relay/acl.js';
import { startRelay, type RelayHandle } from '../../src/relay/server.js';
import { connectRelay } from '../../src/relay/ws-connection.js';
import { homeSessionOf } from '../../src/streams/home.js';
import { startAdapter, type AdapterHandle } from '../../src/streams/run.js';
import { realRoots, WORKTREE_DIR } from '../../src/streams/spawn-place.js';
import { spawner, type Launcher } from '../../src/streams/spawner.js';
import { fakeSurface } from '../support/fake-surface.js';
import { scratchRepo } from '../support/scratch-repo.js';
import { tempLog } from '../support/adapter.js';
import { until } from '../support/until.js';
import { sink } from './support.js';

const base = realRoots([mkdtempSync(join(tmpdir(), 'aep-spawn-cli-'))]).roots[0]!;
const root = join(base, 'root');
const repo = scratchRepo(join(root, 'repo'));
const plain = join(root, 'plain');
mkdirSync(plain);
mkdirSync(join(base, 'outside'));
symlinkSync(join(base, 'outside'), join(root, 'escape'));

let relay: RelayHandle;
let adapter: AdapterHandle;
const asked: string[] = [];
const launch: Launcher = async (req) => {
  asked.push(req.cwd);
  let end!: () => void;
  const ended = new Promise<void>((r) => (end = r));
  return { session: `w-${asked.length}`, ended, stop: async () => end() };
};

test.before(async () => {
  const file = join(base, 'tokens.json');
  writeFileSync(
    file,
    JSON.stringify({
      tokens: [
        { token: 'adapter-t', identity: 'codex-adapter', emit: ['codex'] },
        { token: 'boss-t', identity: 'boss', commands: ['*'], spawn: true },
        { token: 'orch-t', identity: 'orch', commands: ['*'] },
      ],
    }),
    { mode: 0o600 },
  );
  relay = await startRelay({ port: 0, storePath: ':memory:', tokens: loadTokensFile(file) });
  adapter = await startAdapter({
    surface: fakeSurface({ token: 'codex', steeringType: 'x.codex.control.instruct' }),
    port: 0,
    secret: 'spawn-cli-secret-0123456789',
    logPath: tempLog(),
    instruct: true,
    host: 'test-host',
    fsync: false,
    relay: connectRelay({
      url: relay.socketUrl,
      agent: 'codex',
      accepts: ['x.codex.control.spawn'],
      token: 'adapter-t',
    }),
    spawner: spawner({ roots: [root], max: 1, launch }),
  });
});

test.after(async () => {
  await adapter?.close();
  await relay?.close();
});

async function spawn(token: string, cwd: string, extra: Record<string, unknown> = {}) {
  const out = sink();
  const err = sink();
  const code = await runSpawn(
    'do the work',
    { relay: relay.socketUrl, token, sender: 'x', vendor: 'codex', cwd, timeout: '20000', json: true, ...extra },
    { out: out.stream, err: err.stream },
  );
  const text = out.text();
  return { code, o: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>), err: err.text() };
}

test('the home session is on the roster once the adapter is up', async () => {
  await until(async () => (await spawn('boss-t', join(base, 'outside'))).code !== SPAWN_EXIT.spawnOff, 'home', 10_000);
});

test('refusals: each its own code and exit, nothing started or made', async () => {
  const refused = await spawn('orch-t', repo);
  assert.is(refused.code, SPAWN_EXIT.unauthorized, JSON.stringify(refused.o));
  assert.match(String(refused.o['detail']), /orch has no spawn right; add "spawn": true/);
  const cases: [string, Record<string, unknown>, string][] = [
    [join(base, 'outside'), {}, 'cwd-outside-roots'],
    [`${root}/repo/../../outside`, {}, 'cwd-dotdot'],
    [join(root, 'escape'), {}, 'cwd-symlink-escape'],
    [plain, { worktree: true }, 'worktree-not-repo'],
  ];
  for (const [cwd, extra, rule] of cases) {
    const r = await spawn('boss-t', cwd, extra);
    assert.is(r.code, SPAWN_EXIT.rejected, `${rule}: ${JSON.stringify(r.o)}`);
    assert.is(r.o['code'], rule);
    assert.ok(String(r.o['detail']).length > 10, 'a sentence says why');
  }
  assert.equal(asked, [], 'nothing started');
  assert.not.ok(
    existsSync(join(root, WORKTREE_DIR)) && readdirSync(join(root, WORKTREE_DIR)).length > 0,
    'no worktree',
  );
  const other = await spawn('boss-t', repo, { vendor: 'claude-code' });
  assert.is(other.code, SPAWN_EXIT.spawnOff, JSON.stringify(other.o));
});

test('spawned: the session and worktree printed, exit 0; past the cap, spawn-cap', async () => {
  const ok = await spawn('boss-t', repo, { worktree: 'feature-x' });
  assert.is(ok.code, SPAWN_EXIT.spawned, JSON.stringify(ok.o));
  assert.is(ok.o['session'], 'w-1');
  assert.is(ok.o['home'], homeSessionOf('codex', 'test-host'));
  assert.is(ok.o['worktree'], join(root, WORKTREE_DIR, 'feature-x'));
  const capped = await spawn('boss-t', repo);
  assert.is(capped.code, SPAWN_EXIT.rejected);
  assert.is(capped.o['code'], 'spawn-cap');
  assert.is(asked.length, 1);
});

test.run();
