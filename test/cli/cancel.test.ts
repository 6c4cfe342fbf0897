// `aep-steer cancel` on a real relay (D33): a session whose claimant declares control.cancel
// stops its run and the command settles on the cause-linked run.cancelled; a session that takes
// no cancel (Claude Code's hook lane) is refused by the roster with what takes one.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CANCEL_EXIT, runCancel } from '../../src/cli/cancel-command.js';
import { startTestTarget, type TestTarget } from '../support/relay-target.js';
import { sink, startTestStack, type TestStack } from './support.js';

let stack: TestStack;
let target: TestTarget;
test.before(async () => {
  stack = await startTestStack();
  target = await startTestTarget({
    url: stack.relayUrl,
    token: stack.token,
    agent: 'cline',
    accepts: ['control.cancel'],
    sessions: ['hub-1'],
  });
  await stack.waitFor((e) => e.session === 'hub-1');
});
test.after(async () => {
  await target.close();
  await stack.stop();
});

const flags = (session: string, extra: Record<string, unknown> = {}) => ({
  relay: stack.relayUrl,
  token: stack.token,
  sender: 'alice',
  session,
  timeout: '10000',
  ...extra,
});

test('cancel stops the running turn: control.cancel {scope:"run"}, settled on run.cancelled; exit 0', async () => {
  const out = sink();
  const code = await runCancel(flags('hub-1', { run: 'run-7', json: true }), { out: out.stream, err: sink().stream });
  assert.is(code, CANCEL_EXIT.cancelled, out.text());
  const o = JSON.parse(out.text());
  assert.is(o.outcome, 'cancelled');
  const cmd = target.received.find((c) => c.id === o.command)!;
  assert.equal([cmd.type, cmd.data, cmd.run], ['control.cancel', { scope: 'run' }, 'run-7']);
  const cancelled = stack.seen.find((e) => e.id === o.cancelled)!;
  assert.equal([cancelled.type, cancelled.cause, cancelled.data?.['by']], ['run.cancelled', cmd.id, 'control']);
});

test('a session that takes no cancel is refused by the roster, nothing sent; exit 4', async () => {
  const s = await stack.openSession();
  const out = sink();
  assert.is(await runCancel(flags(s.session), { out: out.stream, err: sink().stream }), CANCEL_EXIT.refused);
  assert.match(
    out.text(),
    'not sent (unsupported): claude-code does not declare control.cancel: only a session reached by a way in that can stop a running turn takes it (a native lane or hub, not hooks alone); this session does not take that command: `aep-steer sessions` lists the live ones with what each one takes',
  );
  assert.not.ok(stack.seen.some((e) => e.type === 'control.cancel' && e.session === s.session));
});

test.run();
