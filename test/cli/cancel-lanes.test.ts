// `aep-steer cancel` on sessions whose adapter can stop turns through a native lane (D33), with
// the real adapter runtime and vendor tables (no vendor binary: the sessions are hooks posted as
// the CLIs send them). An interactive Claude Code or a plain Codex session runs on the hook lane
// only, which cannot stop a turn: the cancel is refused with the session taking no cancel (exit 4,
// as the help and README say) and a sentence that says how to get a lane that can.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CANCEL_EXIT, runCancel } from '../../src/cli/cancel-command.js';
import { readJson, referenceFile } from '../support/shared-dir.js';
import { startVendorStack, type VendorStack } from '../support/vendor-e2e.js';
import { sink } from './support.js';

type Input = Record<string, unknown>;

async function hookOnlySession(stack: VendorStack, samples: Record<string, Input>): Promise<string> {
  const session = String(samples.SessionStart!.session_id);
  for (const h of [samples.SessionStart!, samples.UserPromptSubmit!]) {
    const res = await fetch(`http://127.0.0.1:${stack.running.adapter.port}/hook/${stack.secret}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(h),
    });
    assert.is(res.status, 200);
  }
  await stack.waitFor('the turn started', () => stack.find(session, 'run.started'));
  return session;
}

for (const [token, file, how] of [
  ['claude-code', 'claude-code-2.1.332.json', 'run it headless with `aep-steer run claude -p`'],
  ['codex', 'codex-0.171.0.json', 'start it with `aep-steer run codex`'],
] as const) {
  test(`${token} on the hook lane only: cancel is refused, exit 4, saying how to get a lane that can stop a turn`, async () => {
    const stack = await startVendorStack(token);
    try {
      const session = await hookOnlySession(stack, readJson<Record<string, Input>>(referenceFile('samples', file)));
      const out = sink();
      const code = await runCancel(
        { relay: stack.relayUrl, token: stack.relayToken, sender: 'alice', session, timeout: '10000' },
        { out: out.stream, err: sink().stream },
      );
      assert.is(code, CANCEL_EXIT.refused, out.text());
      assert.is(
        out.text().trim(),
        `✗ not stopped (lane-unreached): this session runs on the hook lane only, which cannot stop a turn; to be able to stop its turns, ${how}; the turn goes on`,
      );
      const json = sink();
      assert.is(
        await runCancel(
          { relay: stack.relayUrl, token: stack.relayToken, sender: 'alice', session, timeout: '10000', json: true },
          { out: json.stream, err: sink().stream },
        ),
        CANCEL_EXIT.refused,
      );
      assert.equal((({ outcome, reason, code }) => ({ outcome, reason, code }))(JSON.parse(json.text())), {
        outcome: 'rejected',
        reason: 'unsupported',
        code: 'lane-unreached',
      });
      assert.not.ok(stack.find(session, 'run.cancelled'), 'nothing was stopped, and nothing says so');
    } finally {
      await stack.close();
    }
  });
}

test.run();
