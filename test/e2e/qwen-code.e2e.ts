// Qwen Code 0.24.4 end to end: the real CLI runs headless against the loopback mock Chat
// Completions API; this project's relay and adapter run in-process; the real installer writes
// Qwen's HTTP hooks, which post straight to the adapter; instructions go through the relay as a
// consumer sends them. The mock holds a chosen model request so each instruction is queued before
// the moments that must (or must not) take it: every sequence is deterministic without sleeping.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rmSync } from 'node:fs';
import { installQwenCode } from '../../src/adapters/qwen-code/installer.js';
import { qwenCode } from '../../src/adapters/qwen-code/table.js';
import type { AepCommand, AepEvent } from '../../src/protocol/index.js';
import { startMockOpenAi, type MockOpenAi, type RecordedRequest } from '../support/mock-openai.js';
import {
  bodyHas,
  runQwen,
  startVendorStack,
  strings,
  vendorBinary,
  workspace,
  writeQwenSettings,
  type CliRun,
  type VendorStack,
  type Workspace,
} from '../support/vendor-e2e.js';

let mock: MockOpenAi;
let stack: VendorStack;
/** The same adapter with a short instruction TTL (D26: the default is an hour). */
let shortTtl: VendorStack;
const TTL_MS = 1500;
const workspaces: Workspace[] = [];

function qwenWorkspace(target: VendorStack = stack): Workspace {
  const ws = workspace('aep-qwen-');
  workspaces.push(ws);
  writeQwenSettings(ws);
  installQwenCode({
    user: true,
    port: target.running.adapter.port,
    secret: target.secret,
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

async function startHeld(
  ws: Workspace,
  prompt: string,
  tag: string,
  extra: string[] = [],
): Promise<{ session: string; release: () => void; run: Promise<CliRun> }> {
  const from = stack.events.length;
  const hold = mock.hold((r) => promptOf(r).includes(tag));
  const run = runQwen(ws, mock.baseUrl, prompt, extra);
  await Promise.race([
    hold.arrived,
    run.then((r) => {
      throw new Error(`qwen exited before the held request: ${r.stderr.slice(-2000)}`);
    }),
  ]);
  const session = await stack.newSession(from);
  return { session, release: hold.release, run };
}

async function instruct(session: string, text: string): Promise<AepCommand> {
  const { cmd, settled } = await stack.instruct(session, text);
  assert.is(settled.outcome, 'accepted', JSON.stringify(settled));
  return cmd;
}

const seqOf = (e: AepEvent | undefined): number => {
  assert.ok(e, 'event present');
  return e!.seq!;
};
const delivered = (session: string, cmd: AepCommand) =>
  stack.waitFor(`delivered for ${cmd.id}`, () => stack.find(session, 'x.qwen-code.instruction.delivered', cmd.id));
const pad = (marker: string, n: number) => `${marker} ${'x'.repeat(n - marker.length - 1)}`;

const binary = vendorBinary('qwen-code');
const missing = 'Qwen Code 0.24.4 is not installed in .vendor-clis: run scripts/install-vendor-cli.sh qwen-code';

if (binary === undefined) {
  // Under CI a missing CLI is a failure, never a skip.
  if (process.env.CI !== 'true' && process.env.AEP_SKIP_VENDOR_E2E === '1') {
    console.log(`qwen-code e2e not run (AEP_SKIP_VENDOR_E2E=1): ${missing}`);
  } else {
    test('the pinned Qwen Code CLI is installed', () => assert.unreachable(missing));
  }
} else {
  test.before(async () => {
    mock = await startMockOpenAi();
    stack = await startVendorStack('qwen-code');
    shortTtl = await startVendorStack('qwen-code', { AEP_INSTRUCT_TTL_MS: String(TTL_MS) });
  });

  test.after(async () => {
    await shortTtl?.close();
    await stack?.close();
    await mock?.close();
    for (const w of workspaces) rmSync(w.root, { recursive: true, force: true });
  });

  test('PreToolUse is ineligible and leaves the queue for PostToolUse', async () => {
    const ws = qwenWorkspace();
    const { session, release, run } = await startHeld(ws, '[[TURN]] q-post run one command', 'q-post');
    const marker = `STEER-QWEN-POST-${session.slice(0, 8)}`;
    const cmd = await instruct(session, `${marker} <b>bold</b>`);
    release();
    const result = await run;
    assert.is(result.code, 0, result.stderr.slice(-2000));
    const d = await delivered(session, cmd);
    assert.ok(seqOf(stack.find(session, 'control.accepted', cmd.id)) < seqOf(d), 'ack before delivered');
    // PreToolUse fired with the instruction queued and left it; PostToolUse took it.
    assert.ok(seqOf(stack.find(session, 'tool.requested')) < seqOf(stack.find(session, 'tool.completed')));
    assert.ok(seqOf(stack.find(session, 'tool.completed')) < seqOf(d), 'delivered at PostToolUse, not PreToolUse');
    const [held, next] = requestsOf('q-post');
    assert.not.ok(bodyHas(held!.body, marker));
    const tool = messagesOf(next!).find((m) => m.role === 'tool' && textOf(m).includes(marker));
    assert.ok(tool, 'appended to the tool result');
    // Qwen escapes < and > in forwarded context (vendor-clis-observed §3.6).
    assert.ok(textOf(tool!).includes(`${marker} &lt;b&gt;bold&lt;/b&gt;`), textOf(tool!).slice(-200));
  });

  test('UserPromptSubmit delivers, also on the empty-prompt refire after a tool batch', async () => {
    const ws = qwenWorkspace();
    const { session, release, run } = await startHeld(ws, '[[TURN]] q-batch run one command', 'q-batch');
    // Six of 4,000 (D2's cap): two fit each moment under 10,000 (D8), so PostToolUse, PostToolBatch
    // and the empty-prompt UserPromptSubmit that follows the batch each take two.
    const texts = ['A', 'B', 'C', 'D', 'E', 'F'].map((k) => pad(`STEER-QWEN-${k}-${session.slice(0, 8)}`, 4000));
    const cmds: AepCommand[] = [];
    for (const t of texts) cmds.push(await instruct(session, t));
    release();
    assert.is((await run).code, 0);
    const ds = [];
    for (const c of cmds) ds.push(await delivered(session, c));
    for (let i = 1; i < ds.length; i += 1) assert.ok(ds[i - 1]!.seq! < ds[i]!.seq!, 'FIFO');
    const next = requestsOf('q-batch')[1]!;
    const msgs = messagesOf(next);
    const where = (t: string) => msgs.findIndex((m) => textOf(m).includes(t.slice(0, 40)));
    const toolAt = msgs.findIndex((m) => m.role === 'tool');
    assert.is(where(texts[0]!), toolAt, 'A with PostToolUse, on the tool result');
    assert.is(where(texts[3]!), toolAt, 'D with PostToolBatch, on the tool result');
    const refire = msgs[where(texts[4]!)]!;
    assert.is(refire.role, 'user', 'E and F with the refired UserPromptSubmit: a user message after the batch');
    assert.ok(where(texts[4]!) > toolAt && textOf(refire).includes(texts[5]!.slice(0, 40)));
    assert.ok(
      texts.every((t) => bodyHas(next.body, t)),
      'every instruction arrives whole',
    );
  });

  test('SessionStart of a continued session delivers into the system message', async () => {
    const ws = qwenWorkspace();
    const from = stack.events.length;
    const first = await runQwen(ws, mock.baseUrl, '[[TURN]] [[TOOLS:0]] q-first hello');
    assert.is(first.code, 0, first.stderr.slice(-2000));
    const session = await stack.newSession(from);
    const marker = `STEER-QWEN-START-${session.slice(0, 8)}`;
    const cmd = await instruct(session, marker);
    const resumedFrom = stack.events.length;
    const second = await runQwen(ws, mock.baseUrl, '[[TURN]] [[TOOLS:0]] q-second again', ['--continue']);
    assert.is(second.code, 0, second.stderr.slice(-2000));
    const started = await stack.waitFor('the continued session.started', () =>
      stack.events.slice(resumedFrom).find((e) => e.type === 'session.started'),
    );
    assert.is(started.session, session, '--continue keeps the session id');
    const d = await delivered(session, cmd);
    assert.ok(
      seqOf(started) < seqOf(d) &&
        seqOf(d) < seqOf(stack.events.slice(resumedFrom).find((e) => e.type === 'run.started')),
      'taken at SessionStart',
    );
    const req = requestsOf('q-second')[0]!;
    const system = messagesOf(req).find((m) => m.role === 'system');
    assert.ok(system && textOf(system).includes(marker), 'in the system message of the first request');
  });

  test('a finished headless session never ends: an instruction to it is dropped expired under a short TTL', async () => {
    const ws = qwenWorkspace(shortTtl);
    const from = shortTtl.events.length;
    const run = await runQwen(ws, mock.baseUrl, '[[TURN]] [[TOOLS:0]] q-ttl just answer');
    assert.is(run.code, 0, run.stderr.slice(-2000));
    const session = await shortTtl.newSession(from);
    // Qwen fires no SessionEnd under -p (vendor-surfaces §3.5): the session looks live for ever.
    assert.not.ok(shortTtl.find(session, 'session.ended'), 'no end moment fired');
    const text = `STEER-QWEN-TTL-${session.slice(0, 8)}`;
    const { cmd, settled } = await shortTtl.instruct(session, text);
    assert.is(settled.outcome, 'accepted', 'taken: nothing says the session is over');
    const dropped = await shortTtl.waitFor(
      'dropped expired',
      () => shortTtl.find(session, 'x.qwen-code.instruction.dropped', cmd.id),
      20_000,
    );
    assert.equal(dropped.data, { reason: 'expired' }, 'D26: no instruction waits forever');
    const ack = shortTtl.find(session, 'control.accepted', cmd.id)!;
    assert.ok(Date.parse(dropped.time) - Date.parse(ack.time) >= TTL_MS - 50, 'not before the TTL');
    assert.not.ok(shortTtl.find(session, 'x.qwen-code.instruction.delivered', cmd.id));
    assert.is(mock.modelRequests().filter((r) => bodyHas(r.body, text)).length, 0, 'never reached a model');
  });

  test('the adapter reported no errors on the hook path', () => {
    assert.equal(stack.errors, []);
  });
}

test.run();
