// D31, D32 end to end on the real Qwen Code 0.24.4 against the loopback mock Chat Completions API,
// through this project's relay and adapter: a `moment` sent while a slow tool runs reaches the
// request that carries that tool's result; `steer` and `queue` are refused as the vendor table
// says (it honours `moment` only) and nothing waits; a withdrawn instruction never reaches the model.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { installQwenCode } from '../../src/adapters/qwen-code/installer.js';
import { qwenCode } from '../../src/adapters/qwen-code/table.js';
import { RelayConsumer } from '../../src/consumer/connection.js';
import { sessionQueue } from '../../src/consumer/queue.js';
import { command, type AepCommand } from '../../src/protocol/index.js';
import { startMockOpenAi, type MockOpenAi, type RecordedRequest } from '../support/mock-openai.js';
import {
  bodyHas,
  runQwen,
  startVendorStack,
  strings,
  vendorBinary,
  workspace,
  writeQwenSettings,
  type VendorStack,
  type Workspace,
} from '../support/vendor-e2e.js';

const SENDER = { agent: 'e2e-operator' };
let mock: MockOpenAi;
let stack: VendorStack;
const workspaces: Workspace[] = [];

function qwenWorkspace(): Workspace {
  const ws = workspace('aep-qwen-delivery-');
  workspaces.push(ws);
  writeQwenSettings(ws);
  installQwenCode({
    user: true,
    port: stack.running.adapter.port,
    secret: stack.secret,
    neutral: qwenCode.replies.neutral,
    attentionTimeoutMs: qwenCode.attentionTimeoutMs,
    env: { HOME: ws.home },
  });
  return ws;
}

type ChatMessage = { role?: string; content?: unknown };
const messagesOf = (r: RecordedRequest): ChatMessage[] =>
  (r.body as { messages?: ChatMessage[] } | undefined)?.messages ?? [];
const textOf = (m: ChatMessage): string => strings(m.content).join('');
/** The run a request belongs to: its last marked user prompt. */
const promptOf = (r: RecordedRequest): string =>
  [...messagesOf(r)]
    .reverse()
    .map(textOf)
    .find((t) => t.includes('[[TURN]]')) ?? '';
const requestsOf = (tag: string) => mock.modelRequests().filter((r) => promptOf(r).includes(tag));
const withText = (text: string) => mock.modelRequests().filter((r) => bodyHas(r.body, text));

async function send(
  session: string,
  type: string,
  data: Record<string, unknown>,
  capture: 'redacted' | 'metadata' = 'redacted',
) {
  const cmd: AepCommand = command(SENDER, session, { type, data, capture });
  return { cmd, settled: await stack.send(cmd) };
}

async function accepted(
  session: string,
  type: string,
  data: Record<string, unknown>,
  capture?: 'redacted' | 'metadata',
): Promise<AepCommand> {
  const { cmd, settled } = await send(session, type, data, capture);
  assert.is(settled.outcome, 'accepted', JSON.stringify(settled));
  return cmd;
}

/** What waits in the session's queue, as `aep-steer queue` reads it from the relay. */
async function waiting(session: string) {
  const c = await RelayConsumer.connect({ url: stack.relayUrl, token: stack.relayToken, agent: SENDER.agent });
  try {
    return await sessionQueue(c, session);
  } finally {
    await c.close();
  }
}

const binary = vendorBinary('qwen-code');
const missing = 'Qwen Code 0.24.4 is not installed in .vendor-clis: run scripts/install-vendor-cli.sh qwen-code';

if (binary === undefined) {
  if (process.env.CI !== 'true' && process.env.AEP_SKIP_VENDOR_E2E === '1') {
    console.log(`qwen-code delivery e2e not run (AEP_SKIP_VENDOR_E2E=1): ${missing}`);
  } else {
    test('the pinned Qwen Code CLI is installed', () => assert.unreachable(missing));
  }
} else {
  test.before(async () => {
    mock = await startMockOpenAi();
    stack = await startVendorStack('qwen-code');
  });

  test.after(async () => {
    await stack?.close();
    await mock?.close();
    for (const w of workspaces) rmSync(w.root, { recursive: true, force: true });
  });

  test("moment sent while a slow tool runs reaches the request carrying that tool's result; steer and queue are refused", async () => {
    const ws = qwenWorkspace();
    const gate = join(ws.root, 'moment.go');
    const from = stack.events.length;
    const run = runQwen(ws, mock.baseUrl, `[[TURN]] [[WAITFILE:${gate}]] q-moment run the slow command`);
    const session = await stack.newSession(from);
    const tool = await stack.waitFor('the slow tool call', () => stack.find(session, 'tool.requested'));
    const marker = `STEER-QWEN-MOMENT-${session.slice(0, 8)}`;
    const cmd = await accepted(session, 'x.qwen-code.control.instruct', { text: marker, delivery: 'moment' });
    // The table honours moment only: steer (a turn runs now) and queue are refused, naming it.
    const refused: AepCommand[] = [];
    for (const delivery of ['steer', 'queue']) {
      const { cmd: c, settled } = await send(session, 'x.qwen-code.control.instruct', {
        text: `STEER-QWEN-${delivery.toUpperCase()}-${session.slice(0, 8)}`,
        delivery,
      });
      assert.is(settled.outcome, 'rejected', JSON.stringify(settled));
      if (settled.outcome !== 'rejected') continue;
      assert.is(settled.code, 'delivery-unsupported');
      assert.is(settled.reason, 'unsupported');
      assert.match(settled.detail ?? '', `"${delivery}"`);
      assert.match(settled.detail ?? '', /accepts moment$/);
      assert.is(settled.ack['code'], 'delivery-unsupported', 'the code attribute on control.rejected');
      refused.push(c);
    }
    assert.equal(
      (await waiting(session)).map((w) => [w.id, w.delivery]),
      [[cmd.id, 'moment']],
      'only the moment waits',
    );
    assert.not.ok(stack.find(session, 'x.qwen-code.instruction.delivered', cmd.id), 'PreToolUse left it (D7)');
    writeFileSync(gate, '');
    const result = await run;
    assert.is(result.code, 0, result.stderr.slice(-2000));
    const d = await stack.waitFor('delivered', () => stack.find(session, 'x.qwen-code.instruction.delivered', cmd.id));
    assert.equal([d.data?.['delivery'], d.data?.['moment']], ['moment', 'PostToolUse']);
    assert.ok(
      tool.seq! < stack.find(session, 'tool.completed')!.seq! && stack.find(session, 'tool.completed')!.seq! < d.seq!,
      'after the running tool',
    );
    const reqs = requestsOf('q-moment');
    assert.ok(reqs.length >= 2, `the tool round made a second request (${reqs.length})`);
    assert.not.ok(bodyHas(reqs[0]!.body, marker), 'not in the request that asked for the tool');
    const carrier = messagesOf(reqs[1]!).find((m) => m.role === 'tool' && textOf(m).includes(marker));
    assert.ok(carrier, "on the tool result of the same turn's next request");
    assert.ok(textOf(carrier!).includes('TOOL_RAN_'), 'the result of the tool that was running');
    for (const c of refused) {
      const text = (c.data as { text: string }).text;
      assert.is(withText(text).length, 0, `refused ${text} reached no request`);
      assert.not.ok(stack.find(session, 'x.qwen-code.instruction.delivered', c.id));
    }
    assert.equal(await waiting(session), [], 'nothing waits after the turn');
  });

  test('a withdrawn instruction never reaches the model: dropped withdrawn, cause-linked to the withdraw', async () => {
    const ws = qwenWorkspace();
    const from = stack.events.length;
    const hold = mock.hold((r) => promptOf(r).includes('q-withdraw'));
    const run = runQwen(ws, mock.baseUrl, '[[TURN]] q-withdraw run one command');
    await hold.arrived;
    const session = await stack.newSession(from);
    const text = `STEER-QWEN-WITHDRAWN-${session.slice(0, 8)}`;
    const cmd = await accepted(session, 'x.qwen-code.control.instruct', { text });
    const w = await accepted(session, 'x.qwen-code.control.withdraw', { instruction: cmd.id }, 'metadata');
    const dropped = await stack.waitFor('dropped withdrawn', () =>
      stack.find(session, 'x.qwen-code.instruction.dropped', w.id),
    );
    assert.equal([dropped.subject, dropped.data?.['reason']], [cmd.id, 'withdrawn']);
    assert.equal(await waiting(session), [], 'nothing waits once withdrawn');
    hold.release();
    const result = await run;
    assert.is(result.code, 0, result.stderr.slice(-2000));
    await stack.waitFor('run.finished', () => stack.find(session, 'run.finished'));
    const reqs = requestsOf('q-withdraw');
    assert.ok(reqs.length >= 2, 'PostToolUse and the refired UserPromptSubmit came and went with the queue empty');
    assert.ok(stack.find(session, 'tool.completed'), 'the tool ran');
    for (const q of reqs) assert.not.ok(bodyHas(q.body, text), 'no request carries the withdrawn text');
    assert.is(withText(text).length, 0);
    assert.not.ok(stack.find(session, 'x.qwen-code.instruction.delivered', cmd.id));
    const again = await send(session, 'x.qwen-code.control.withdraw', { instruction: cmd.id }, 'metadata');
    assert.equal(
      again.settled.outcome === 'rejected' ? [again.settled.code, again.settled.detail] : again.settled,
      ['not-waiting', 'already withdrawn; nothing more was done'],
      'a second withdraw finds nothing to take back',
    );
  });

  test('the adapter reported no errors on the hook path', () => {
    assert.equal(stack.errors, []);
  });
}

test.run();
