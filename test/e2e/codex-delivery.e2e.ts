// D31, D32 end to end on the real Codex 0.171.0 against the loopback mock Responses API, through
// this project's relay and adapter: a `moment` sent while a slow tool runs reaches the request
// that carries that tool's result, in the same turn; a plain `codex` (no app-server lane: the
// roster shows the hook lane only) refuses `steer` unsupported, saying how to get the lane; a
// withdrawn instruction never reaches the model.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { codex } from '../../src/adapters/codex/table.js';
import { installCodex } from '../../src/adapters/codex/installer.js';
import { SESSIONS_EXIT, runSessions } from '../../src/cli/sessions-command.js';
import { command, type AepCommand } from '../../src/protocol/index.js';
import { startMockOpenAi, type MockOpenAi, type RecordedRequest } from '../support/mock-openai.js';
import { sink } from '../cli/support.js';
import {
  bodyHas,
  codexHome,
  runCodex,
  startVendorStack,
  vendorBinary,
  workspace,
  writeCodexConfig,
  type VendorStack,
  type Workspace,
} from '../support/vendor-e2e.js';

const SENDER = { agent: 'e2e-operator' };
let mock: MockOpenAi;
let stack: VendorStack;
const workspaces: Workspace[] = [];

function codexWorkspace(): Workspace {
  const ws = workspace('aep-codex-delivery-');
  workspaces.push(ws);
  writeCodexConfig(ws, mock.baseUrl);
  const report = installCodex({
    user: true,
    port: stack.running.adapter.port,
    secret: stack.secret,
    neutral: codex.replies.neutral,
    attentionTimeoutMs: codex.attentionTimeoutMs,
    env: { CODEX_HOME: codexHome(ws), HOME: ws.home, AEP_CODEX_BIN: binary!, AEP_STATE_DIR: stack.stateDir },
  });
  assert.match(report.notes[0] ?? '', /^trusted 11 hooks in /);
  return ws;
}

type Item = { type?: string; role?: string; content?: { text?: string }[]; output?: unknown };
const itemsOf = (r: RecordedRequest): Item[] => (r.body as { input?: Item[] } | undefined)?.input ?? [];
/** The prompt of the conversation a Responses request belongs to: its last marked user message. */
const promptOf = (r: RecordedRequest): string => {
  const users = itemsOf(r)
    .filter((i) => i.type === 'message' && i.role === 'user')
    .map((i) => (i.content ?? []).map((c) => c.text ?? '').join(''));
  return [...users].reverse().find((t) => t.includes('[[TURN]]')) ?? '';
};
const requestsOf = (tag: string) => mock.modelRequests().filter((r) => promptOf(r).includes(tag));

async function accepted(
  session: string,
  type: string,
  data: Record<string, unknown>,
  capture: 'redacted' | 'metadata' = 'redacted',
): Promise<AepCommand> {
  const cmd = command(SENDER, session, { type, data, capture });
  const settled = await stack.send(cmd);
  assert.is(settled.outcome, 'accepted', JSON.stringify(settled));
  return cmd;
}

const binary = vendorBinary('codex');
const missing = 'Codex 0.171.0 is not installed in .vendor-clis: run scripts/install-vendor-cli.sh codex';

if (binary === undefined) {
  if (process.env.CI !== 'true' && process.env.AEP_SKIP_VENDOR_E2E === '1') {
    console.log(`codex delivery e2e not run (AEP_SKIP_VENDOR_E2E=1): ${missing}`);
  } else {
    test('the pinned Codex CLI is installed', () => assert.unreachable(missing));
  }
} else {
  test.before(async () => {
    mock = await startMockOpenAi();
    stack = await startVendorStack('codex');
  });

  test.after(async () => {
    await stack?.close();
    await mock?.close();
    for (const w of workspaces) rmSync(w.root, { recursive: true, force: true });
  });

  test("moment sent while a slow tool runs reaches the request carrying that tool's result, in the same turn", async () => {
    const ws = codexWorkspace();
    const gate = join(ws.root, 'moment.go');
    const from = stack.events.length;
    const run = runCodex(ws, `[[TURN]] [[WAITFILE:${gate}]] c-moment run the slow command`);
    const session = await stack.newSession(from);
    const tool = await stack.waitFor('the slow tool call', () => stack.find(session, 'tool.requested'));
    const text = `STEER-CODEX-MOMENT-${session.slice(-8)}`;
    const cmd = await accepted(session, 'x.codex.control.instruct', { text, delivery: 'moment' });
    assert.not.ok(stack.find(session, 'x.codex.instruction.delivered', cmd.id), 'waits while the tool runs');
    writeFileSync(gate, '');
    const result = await run;
    assert.is(result.code, 0, result.stderr.slice(-2000));
    const d = await stack.waitFor('delivered', () => stack.find(session, 'x.codex.instruction.delivered', cmd.id));
    assert.equal([d.data?.['delivery'], d.data?.['moment']], ['moment', 'PostToolUse']);
    const completed = stack.find(session, 'tool.completed');
    assert.ok(completed && tool.seq! < completed.seq! && completed.seq! < d.seq!, 'after the running tool completed');
    const reqs = requestsOf('c-moment');
    assert.ok(reqs.length >= 2, `the tool round made a second request (${reqs.length})`);
    assert.not.ok(bodyHas(reqs[0]!.body, text), 'not in the request that asked for the tool');
    const items = itemsOf(reqs[1]!);
    const at = items.findIndex((i) => i.role === 'developer' && (i.content ?? []).some((c) => c.text === text));
    const call = items.findIndex((i) => i.type === 'function_call');
    const output = items.findIndex((i) => typeof i.type === 'string' && i.type.endsWith('_call_output'));
    assert.ok(output >= 0 && bodyHas(items[output], 'TOOL_RAN_'), "the next request carries the running tool's result");
    // Codex 0.171.0 files PostToolUse context between the call and its output.
    assert.ok(call >= 0 && at > call, "a developer item after the tool call, in the same turn's next request");
  });

  test('steer to a plain codex session is refused unsupported, saying how to get the lane, while a moment sent meanwhile reaches the same turn', async () => {
    const ws = codexWorkspace();
    const gate = join(ws.root, 'steer.go');
    const from = stack.events.length;
    const run = runCodex(ws, `[[TURN]] [[WAITFILE:${gate}]] c-steer run the slow command`);
    const session = await stack.newSession(from);
    await stack.waitFor('the slow tool call', () => stack.find(session, 'tool.requested'));
    // A turn runs, but no native lane reaches a plain `codex` (D31): refused, naming what it takes.
    const text = `STEER-CODEX-STEER-${session.slice(-8)}`;
    const steer = command(SENDER, session, {
      type: 'x.codex.control.instruct',
      data: { text, delivery: 'steer' },
      capture: 'redacted',
    });
    const settled = await stack.send(steer);
    assert.equal(settled.outcome === 'rejected' ? [settled.reason, settled.code, settled.detail] : settled, [
      'unsupported',
      'delivery-unsupported',
      'this session cannot take delivery "steer": it accepts moment, queue; start it with `aep-steer run codex`',
    ]);
    // The roster says why: this session has the hook lane only.
    const out = sink();
    const code = await runSessions(
      { relay: stack.relayUrl, token: stack.relayToken, sender: 'e2e-roster' },
      { out: out.stream },
    );
    assert.is(code, SESSIONS_EXIT.ok);
    const lines = out.text().split('\n');
    const head = lines[0] ?? '';
    const row = lines.find((l) => l.startsWith(session)) ?? '';
    const lanes = row.slice(head.indexOf('LANES'), head.indexOf('ACCEPTS')).trim();
    assert.is(lanes, 'hook', `the LANES column of \`aep-steer sessions\`:\n${out.text()}`);
    const moment = `MOMENT-CODEX-STEER-${session.slice(-8)}`;
    const cmd = await accepted(session, 'x.codex.control.instruct', { text: moment, delivery: 'moment' });
    writeFileSync(gate, '');
    const result = await run;
    assert.is(result.code, 0, result.stderr.slice(-2000));
    const d = await stack.waitFor('delivered', () => stack.find(session, 'x.codex.instruction.delivered', cmd.id));
    assert.equal([d.data?.['delivery'], d.data?.['moment']], ['moment', 'PostToolUse']);
    const stop = await stack.waitFor('run.finished', () => stack.find(session, 'run.finished'));
    assert.ok(d.seq! < stop.seq!, 'inside the turn, before it finished');
    const reqs = requestsOf('c-steer');
    assert.not.ok(bodyHas(reqs[0]!.body, moment), 'not in the request that asked for the tool');
    assert.ok(reqs.length >= 2 && bodyHas(reqs[1]!.body, moment), "in the same turn's next request");
    assert.is(mock.modelRequests().filter((r) => bodyHas(r.body, text)).length, 0, 'the refused steer never');
    assert.not.ok(stack.find(session, 'x.codex.instruction.delivered', steer.id));
  });

  test('a withdrawn instruction never reaches the model: dropped withdrawn, cause-linked to the withdraw', async () => {
    const ws = codexWorkspace();
    const from = stack.events.length;
    const hold = mock.hold((r) => promptOf(r).includes('c-withdraw'));
    const run = runCodex(ws, '[[TURN]] c-withdraw run one command');
    await Promise.race([
      hold.arrived,
      run.then((r) => {
        throw new Error(`codex exited before the held request: ${r.stderr.slice(-2000)}`);
      }),
    ]);
    const session = await stack.newSession(from);
    const text = `STEER-CODEX-WITHDRAWN-${session.slice(-8)}`;
    const cmd = await accepted(session, 'x.codex.control.instruct', { text });
    const w = await accepted(session, 'x.codex.control.withdraw', { instruction: cmd.id }, 'metadata');
    const dropped = await stack.waitFor('dropped withdrawn', () =>
      stack.find(session, 'x.codex.instruction.dropped', w.id),
    );
    assert.equal([dropped.subject, dropped.data?.['reason']], [cmd.id, 'withdrawn']);
    hold.release();
    const result = await run;
    assert.is(result.code, 0, result.stderr.slice(-2000));
    await stack.waitFor('session.ended', () => stack.find(session, 'session.ended'));
    assert.ok(stack.find(session, 'tool.completed'), 'PreToolUse and PostToolUse came and went with the queue empty');
    const reqs = requestsOf('c-withdraw');
    assert.ok(reqs.length >= 2, `the tool round made a second request (${reqs.length})`);
    for (const q of reqs) assert.not.ok(bodyHas(q.body, text), 'no request carries the withdrawn text');
    assert.is(mock.modelRequests().filter((r) => bodyHas(r.body, text)).length, 0);
    assert.not.ok(stack.find(session, 'x.codex.instruction.delivered', cmd.id));
  });

  test('the adapter reported no errors on the hook path', () => {
    assert.equal(stack.errors, []);
  });
}

test.run();
