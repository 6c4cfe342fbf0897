// D45 on the real Codex 0.171.0 against the loopback mock Responses API: the adapter's spawner
// starts a Codex worker (an app-server of its own, a new thread, its first turn) in a git worktree
// of a scratch repository under the spawn root. The new thread is a session on the stream with both
// lanes; a steer sent mid-turn lands in the same turn's next model request; stopping the spawner
// leaves no app-server running.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { codexAppServer } from '../../src/adapters/codex/app-server/spec.js';
import { openAdapterLanes } from '../../src/cli/run-command.js';
import { WORKTREE_DIR } from '../../src/streams/spawn-place.js';
import { spawner, type Spawner } from '../../src/streams/spawner.js';
import type { AepEvent } from '../../src/protocol/index.js';
import { e2eSuite } from '../support/e2e-stack.js';
import { alive, spawnedServers } from '../support/spawned-servers.js';
import { scratchRepo } from '../support/scratch-repo.js';
import { bodyHas } from '../support/vendor-e2e.js';

const e2e = e2eSuite('codex', {
  label: 'codex-spawn',
  env: (home, e2e) => ({ ...home.env, AEP_CODEX_BIN: e2e.binary }),
});

let workers: Spawner;
let repo: string;

/** The app-servers the adapter's spawns started, running now. */
const spawned = (): number[] => spawnedServers(e2e.stack.stateDir);

if (e2e.installed) {
  test.before(async () => {
    repo = scratchRepo(join(e2e.home.root, 'scratch'));
    workers = spawner({
      roots: [e2e.home.root],
      max: 2,
      // The Codex table's own launcher, as the adapter has it, with the adapter's state directory.
      launch: await codexAppServer.spawn!(e2e.runEnv(e2e.home), e2e.stack.stateDir, () =>
        openAdapterLanes(e2e.stack.running.adapter.port, e2e.stack.secret),
      ),
    });
    e2e.defer(() => workers.stopAll());
  });

  test("a Codex worker spawned in a worktree: its thread is the session, a steer lands in the same turn's next request, its stop leaves nothing running", async () => {
    const gate = join(e2e.home.root, 'spawn.go');
    const r = await workers.spawn({
      prompt: `[[TURN]] [[WAITFILE:${gate}]] w-codex run the slow command`,
      cwd: repo,
      worktree: true,
      commandId: 'SPAWNCODEX1',
    });
    assert.ok(r.ok, JSON.stringify(r));
    if (!r.ok) return;
    const session = r.session;
    assert.is(r.worktree, join(e2e.home.root, WORKTREE_DIR, 'aep-spawncodex1'));
    assert.match(execFileSync('git', ['worktree', 'list'], { cwd: repo }).toString(), /aep-spawncodex1/);
    const all = (type: string): AepEvent[] => e2e.stack.events.filter((e) => e.session === session && e.type === type);
    await e2e.stack.waitFor('the worker reached on its app-server', () =>
      all('x.codex.session.described').find((e) => (e.data?.['lanes'] as string[] | undefined)?.includes('app-server')),
    );
    await e2e.stack.waitFor("the worker's slow tool call", () => all('tool.requested')[0]);
    const text = `STEER-SPAWNED-${session.slice(-8)}`;
    const cmd = await e2e.stack.accepted(session, 'x.codex.control.instruct', { text, delivery: 'steer' });
    writeFileSync(gate, '');
    const d = await e2e.stack.waitFor('delivered', () =>
      e2e.stack.find(session, 'x.codex.instruction.delivered', cmd.id),
    );
    assert.is(d.data?.['lane'], 'app-server');
    await e2e.stack.waitFor('the turn finished', () => all('run.finished')[0]);
    const reqs = e2e.requestsOf('w-codex').filter((q) => {
      const tools = (q.body as { tools?: unknown[] } | undefined)?.tools;
      return Array.isArray(tools) && tools.length > 0;
    });
    assert.ok(reqs.length >= 2, `the tool round made a second request (${reqs.length})`);
    assert.not.ok(bodyHas(reqs[0]!.body, text), 'not in the request that asked for the tool');
    assert.ok(bodyHas(reqs[1]!.body, text), "in the same turn's next request");
    assert.equal(workers.running(), [session]);
    const pids = spawned();
    assert.is(pids.length, 1, 'one app-server for the worker');
    await workers.stopAll();
    assert.equal(workers.running(), []);
    assert.equal(pids.filter(alive), [], 'its app-server is gone');
    assert.ok(existsSync(r.worktree!), 'the worktree is kept');
  });

  test("the audit of the adapter's log is clean", async () => {
    await e2e.auditClean();
  });
}

test.run();
