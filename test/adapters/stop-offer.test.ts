// D33: Stop is offered only where a way in can stop the turn, from what the roster says of a
// session and its vendor's cancel row (pure), and each vendor's row agrees with its lanes.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { claudeCode } from '../../src/adapters/claude-code/table.js';
import { cline } from '../../src/adapters/cline/table.js';
import { codex } from '../../src/adapters/codex/table.js';
import { qwenCode } from '../../src/adapters/qwen-code/table.js';
import { stopOffer } from '../../src/adapters/stop-offer.js';

const CANCEL = ['x.claude-code.control.instruct', 'control.cancel'];

test('a session on the hook lane only is not offered Stop: the reason says how to get a lane that can', () => {
  assert.equal(stopOffer({ agent: 'claude-code', accepts: CANCEL, lanes: ['hook'] }, claudeCode.cancel), {
    offered: false,
    code: 'lane-unreached',
    why: 'This session runs on the hook lane only, which cannot stop a turn; to be able to stop its turns, run it headless with `aep-steer run claude -p`.',
  });
  assert.equal(stopOffer({ agent: 'codex', accepts: CANCEL, lanes: ['hook'] }, codex.cancel), {
    offered: false,
    code: 'lane-unreached',
    why: 'This session runs on the hook lane only, which cannot stop a turn; to be able to stop its turns, start it with `aep-steer run codex`.',
  });
});

test('a session a stopping lane reaches is offered Stop; so is any session of a vendor that stops through its own channel', () => {
  assert.equal(
    stopOffer({ agent: 'claude-code', accepts: CANCEL, lanes: ['hook', 'stream-json'] }, claudeCode.cancel),
    {
      offered: true,
    },
  );
  assert.equal(stopOffer({ agent: 'codex', accepts: CANCEL, lanes: ['hook', 'app-server'] }, codex.cancel), {
    offered: true,
  });
  assert.equal(stopOffer({ agent: 'cline', accepts: ['control.cancel'] }, cline.cancel), { offered: true });
  // Lanes not described yet: the adapter decides (and refuses with the same reason).
  assert.equal(stopOffer({ agent: 'codex', accepts: CANCEL }, codex.cancel), { offered: true });
});

test('an adapter that takes no cancel, and an ended session, are not offered Stop either', () => {
  assert.equal(
    stopOffer(
      { agent: 'claude-code', accepts: ['x.claude-code.control.instruct'], lanes: ['hook'] },
      claudeCode.cancel,
    ),
    {
      offered: false,
      code: 'unsupported',
      why: 'Its adapter takes no cancel; to be able to stop turns of claude-code, start its adapter with AEP_INSTRUCT=1, and run the session headless with `aep-steer run claude -p`.',
    },
  );
  assert.equal(stopOffer({ agent: 'vscode', accepts: [] }, undefined), {
    offered: false,
    code: 'unsupported',
    why: 'Nothing can stop a turn of vscode from here: its adapter has no way to.',
  });
  assert.equal(
    stopOffer({ agent: 'codex', state: 'ended', accepts: CANCEL, lanes: ['hook', 'app-server'] }, codex.cancel),
    {
      offered: false,
      code: 'session-ended',
      why: 'The session has ended: no turn runs.',
    },
  );
});

test("each vendor's cancel row names its own lanes, and says how to get one as the lane itself says it", async () => {
  for (const t of [codex, claudeCode, qwenCode]) {
    assert.ok(t.cancel, `${t.token} has a cancel row`);
    assert.equal(
      t.cancel!.by,
      (t.lanes ?? []).map((l) => l.name),
      `${t.token}: the lanes that stop a turn are its lanes`,
    );
  }
  const { streamJsonLane } = await import('../../src/adapters/claude-code/stream-json/lane.js');
  const claude = streamJsonLane({ socketPath: '/nonexistent/never-opened.sock' });
  assert.is(claudeCode.cancel!.how, claude.how);
  await claude.close();
  const { codexServersLane } = await import('../../src/adapters/codex/app-server/servers.js');
  const app = codexServersLane({ dir: '/nonexistent', bin: 'codex' });
  assert.is(codex.cancel!.how, app.how);
  await app.close();
  assert.equal(cline.cancel!.by, ['user-plane']);
});

test.run();
