// `aep-steer cancel` on a real relay (D33): a session whose claimant declares control.cancel
// stops its run and the command settles on the cause-linked run.cancelled; a session that takes
// no cancel (Claude Code's hook lane) is refused by the roster with what takes one.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CANCEL_EXIT, runCancel } from '../../src/cli/cancel-command.js';
import { explainCancel } from '../../src/consumer/explain.js';
import { CONSOLE_VOICE, MCP_VOICE } from '../../src/consumer/next-step.js';
import type { AepCommand } from '../../src/protocol/index.js';
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
    // As the Codex app-server lane says it (D33): a stop that leaves a shell command running
    // names it; one sent with kill_tools names it ended.
    cancelledData: (cmd: AepCommand) => {
      const tool = { pid: 4242, command: 'sleep 600' };
      if (cmd.run !== 'run-left') return {};
      return (cmd.data as { kill_tools?: boolean }).kill_tools === true ? { killed: [tool] } : { left_running: [tool] };
    },
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

test('a stop that leaves a shell command running says so, names it, and says how to end it; --kill-tools asks for it ended', async () => {
  const out = sink();
  const code = await runCancel(flags('hub-1', { run: 'run-left' }), { out: out.stream, err: sink().stream });
  assert.is(code, CANCEL_EXIT.cancelled, out.text());
  const lines = out.text().trim().split('\n');
  assert.match(lines[0]!, /^✓ the running turn was stopped \(event /);
  assert.is(
    lines[1],
    '! the agent left these running: pid 4242 `sleep 600`; end them yourself, or stop turns with `aep-steer cancel --kill-tools` to end them with the turn',
  );
  const json = sink();
  await runCancel(flags('hub-1', { run: 'run-left', json: true }), { out: json.stream, err: sink().stream });
  assert.equal(JSON.parse(json.text()).leftRunning, [{ pid: 4242, command: 'sleep 600' }]);

  const killed = sink();
  assert.is(
    await runCancel(flags('hub-1', { run: 'run-left', killTools: true }), { out: killed.stream, err: sink().stream }),
    CANCEL_EXIT.cancelled,
  );
  const sent = target.received.at(-1)!;
  assert.equal(sent.data, { scope: 'run', kill_tools: true });
  assert.match(killed.text(), '  and the tool processes it left were ended: pid 4242 `sleep 600`');
  assert.not.match(killed.text(), 'left these running');
});

test('--clear asks the lane to withdraw what waits as well (D44): the command carries clear', async () => {
  const out = sink();
  const code = await runCancel(flags('hub-1', { run: 'run-clear', clear: true, json: true }), {
    out: out.stream,
    err: sink().stream,
  });
  assert.is(code, CANCEL_EXIT.cancelled, out.text());
  const cmd = target.received.find((c) => c.id === JSON.parse(out.text()).command)!;
  assert.equal(cmd.data, { scope: 'run', clear: true });
});

test('MCP and the console say a command left running in their own words', () => {
  const o = {
    outcome: 'cancelled' as const,
    command: 'c1',
    session: 's1',
    vendor: 'codex',
    ack: 'a1',
    cancelled: 'e1',
    leftRunning: [{ pid: 7, command: 'make test' }],
  };
  const mcp = explainCancel(o, MCP_VOICE).text;
  assert.match(mcp, 'The agent left these running: pid 7 `make test`; call cancel with kill_tools: true');
  assert.not.match(mcp, 'aep-steer');
  assert.match(explainCancel(o, CONSOLE_VOICE).text, 'end them on that machine');
  assert.equal(explainCancel(o, MCP_VOICE).facts['left_running'], o.leftRunning);
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
