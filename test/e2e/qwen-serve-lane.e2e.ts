// The `qwen serve` native lane (D30–D33) on the real Qwen Code 0.24.4 daemon against the loopback
// mock Chat Completions API, the lane object driven directly: a steer sent while a slow tool runs
// is in the next model request of the same turn, with the daemon's receipt as a `delivered`
// fact; an idle session refuses it; a resend is one injection; a withdrawn message never reaches
// the model; interrupt withdraws what waits, then stops the turn; queue is the next turn (or,
// with none running, the turn its prompt starts), and one taken back while it waits ends no turn;
// permission requests are answered over the lane; a wrong token is refused once, clearly; a
// killed daemon is one `lost`, and the lane attaches again after a restart.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { chmodSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { LaneFact } from '../../src/streams/lane.js';
import { processTable } from '../../src/adapters/tool-processes.js';
import { qwenServeLane, type QwenServeLane } from '../../src/adapters/qwen-code/serve/lane.js';
import type { SteeringError } from '../../src/protocol/errors.js';
import { startMockOpenAi, type MockOpenAi, type RecordedRequest } from '../support/mock-openai.js';
import { startQwenServe, type ServeDaemon } from '../support/qwen-serve.js';
import { until, wait } from '../support/until.js';
import {
  chatMessagesOf,
  chatTextOf,
  turnPromptOf,
  vendorBinary,
  workspace,
  type Workspace,
  vendorMissing,
} from '../support/vendor-e2e.js';

const INJECTED = '[User message received during tool execution]: ';

let mock: MockOpenAi;
let ws: Workspace;
let daemon: ServeDaemon;
let lane: QwenServeLane;
let session: string;
const facts: LaneFact[] = [];
const errors: SteeringError[] = [];
const extra: { lane?: QwenServeLane; daemon?: ServeDaemon; ws?: Workspace }[] = [];

const messagesOf = (r: RecordedRequest) => chatMessagesOf(r.body);
const textOf = chatTextOf;
const requestsOf = (tag: string) => mock.modelRequests().filter((r) => turnPromptOf(r.body).includes(tag));
const seen = (text: string) => mock.modelRequests().filter((r) => r.text.includes(text));

const factsFor = (kind: LaneFact['kind']) => facts.filter((f) => f.kind === kind);
const turnEnded = (turnId: string) =>
  facts.find((f): f is Extract<LaneFact, { kind: 'turn.ended' }> => f.kind === 'turn.ended' && f.turnId === turnId);

/** A lane of the test's own besides the suite's, closed with it: what it said, and the facts it gave. */
function extraLane(o: Omit<Parameters<typeof qwenServeLane>[0], 'onError'>) {
  const said: SteeringError[] = [];
  const lane = qwenServeLane({ ...o, onError: (e) => said.push(e) });
  extra.push({ lane });
  const got: LaneFact[] = [];
  lane.facts$.subscribe((f) => got.push(f));
  return { lane, said, got };
}

/** Starts a turn whose shell call waits for a file; resolves once the tool runs (the model asked for it). */
async function slowTurn(tag: string): Promise<{ turnId: string; release: () => void }> {
  const gate = join(ws.root, `${tag}.go`);
  const before = mock.modelRequests().length;
  const turnId = await daemon.prompt(session, `[[TURN]] [[WAITFILE:${gate}]] ${tag} run the slow command`);
  await until(
    () => facts.some((f) => f.kind === 'turn.started' && f.turnId === turnId),
    `turn.started ${turnId}`,
    30_000,
  );
  await until(() => mock.modelRequests().length > before, 'the model asked for the tool', 30_000);
  // The tool call is streamed back: the daemon's shell runs the loop that waits for the gate.
  await until(
    () => (processTable() ?? []).some((p) => p.state !== 'Z' && p.argv.some((a) => a.includes(gate))),
    'the slow shell call to run',
    30_000,
  );
  return { turnId, release: () => writeFileSync(gate, '') };
}

const binary = vendorBinary('qwen-code');
const missing = 'Qwen Code 0.24.4 is not installed in .vendor-clis: run scripts/install-vendor-cli.sh qwen-code';

if (!vendorMissing(binary, 'qwen serve lane', missing)) {
  test.before(async () => {
    mock = await startMockOpenAi();
    ws = workspace('aep-qwen-serve-');
    daemon = await startQwenServe(ws, mock.baseUrl);
    session = await daemon.session('yolo');
    lane = qwenServeLane({ url: daemon.url, tokenFile: daemon.tokenFile, pollMs: 200, onError: (e) => errors.push(e) });
    lane.facts$.subscribe((f) => facts.push(f));
    await until(() => lane.reaches(session), 'the lane attached to the session', 30_000);
  });

  test.after(async () => {
    await lane?.close();
    for (const x of extra) await x.lane?.close();
    await daemon?.kill();
    for (const x of extra) await x.daemon?.kill();
    await mock?.close();
    if (ws !== undefined) rmSync(ws.root, { recursive: true, force: true });
    for (const x of extra) if (x.ws !== undefined) rmSync(x.ws.root, { recursive: true, force: true });
  });

  test('attached: the lane follows the session the daemon hosts', () => {
    assert.ok(
      facts.some((f) => f.kind === 'attached' && f.session === session),
      JSON.stringify(facts),
    );
    assert.equal(errors, []);
  });

  test('a steer to an idle session is refused idle: a steer never starts a turn; interrupt has nothing to stop', async () => {
    const before = mock.modelRequests().length;
    const out = await lane.steer({ session, commandId: 'cmd-idle-1', text: 'STEER-SERVE-IDLE' });
    assert.equal(out.ok ? out : out.reason, 'idle', JSON.stringify(out));
    await wait(500);
    assert.is(mock.modelRequests().length, before, 'no model request followed');
    assert.is(seen('STEER-SERVE-IDLE').length, 0);
    const stop = await lane.interrupt(session);
    assert.equal(stop, { ok: false, detail: 'no turn runs in this qwen serve session; nothing to stop' });
  });

  test("a steer during a slow tool call is in the same turn's next model request, with the daemon's receipt", async () => {
    const { turnId, release } = await slowTurn('s-steer');
    const text = 'STEER-SERVE-ONE';
    const out = await lane.steer({ session, commandId: 'cmd-steer-1', text });
    assert.equal(out, { ok: true, ref: 'cmd-steer-1' });
    // A resend of the same command id is accepted again and injected once.
    assert.equal(await lane.steer({ session, commandId: 'cmd-steer-1', text }), { ok: true, ref: 'cmd-steer-1' });
    // The same id with another text is refused by the daemon.
    const other = await lane.steer({ session, commandId: 'cmd-steer-1', text: 'STEER-SERVE-OTHER' });
    assert.equal(other.ok ? other : other.reason, 'refused', JSON.stringify(other));
    assert.not.ok(
      facts.some((f) => f.kind === 'delivered' && f.commandId === 'cmd-steer-1'),
      'no receipt yet',
    );
    release();
    await until(() => turnEnded(turnId) !== undefined, 'turn.ended', 30_000);
    const d = facts.find((f) => f.kind === 'delivered' && f.commandId === 'cmd-steer-1');
    assert.ok(d, JSON.stringify(facts.slice(-10)));
    assert.equal(d, { ...d!, session, ref: 'cmd-steer-1' });
    assert.ok(facts.indexOf(d!) < facts.indexOf(turnEnded(turnId)!), 'the receipt came within the turn');
    assert.is(turnEnded(turnId)!.status, 'end_turn');
    const reqs = requestsOf('s-steer');
    assert.ok(reqs.length >= 2, 'the tool round and the answer after it');
    assert.not.ok(reqs[0]!.text.includes(text), 'not in the request that asked for the tool');
    const msgs = messagesOf(reqs[1]!);
    const at = msgs.findIndex((m) => m.role === 'user' && textOf(m).includes(`${INJECTED}${text}`));
    assert.ok(at > 0, `${INJECTED}${text} in the next request: ${JSON.stringify(msgs.slice(-3))}`);
    assert.is(msgs[at - 1]!.role, 'tool', "right after the running tool's result");
    assert.ok(textOf(msgs[at - 1]!).includes('TOOL_RAN_'));
    assert.is(reqs[1]!.text.split(text).length - 1, 1, 'injected once');
    assert.is(seen('STEER-SERVE-OTHER').length, 0, 'the refused text reached no request');
    // After the receipt a withdraw finds nothing to take back, and a resend sends nothing more.
    assert.equal(await lane.withdraw({ session, commandId: 'cmd-steer-1' }), { removed: false });
    assert.equal(await lane.steer({ session, commandId: 'cmd-steer-1', text }), { ok: true, ref: 'cmd-steer-1' });
    assert.is(factsFor('delivered').filter((f) => f.kind === 'delivered' && f.commandId === 'cmd-steer-1').length, 1);
  });

  test('a lane attaching while a turn runs reports that turn, and its steer lands in it', async () => {
    const { turnId, release } = await slowTurn('s-late');
    const { lane: late, got } = extraLane({ url: daemon.url, tokenFile: daemon.tokenFile });
    await until(() => got.some((f) => f.kind === 'turn.started' && f.turnId === turnId), 'the running turn', 10_000);
    assert.equal(
      got.map((f) => f.kind),
      ['attached', 'turn.started'],
    );
    const text = 'STEER-SERVE-LATE';
    assert.equal(await late.steer({ session, commandId: 'cmd-late-1', text }), { ok: true, ref: 'cmd-late-1' });
    release();
    await until(() => got.some((f) => f.kind === 'turn.ended' && f.turnId === turnId), 'turn.ended', 30_000);
    assert.ok(got.some((f) => f.kind === 'delivered' && f.commandId === 'cmd-late-1'));
    assert.ok(requestsOf('s-late').some((r) => r.text.includes(`${INJECTED}${text}`)));
    await late.close();
  });

  test('a steer withdrawn before injection never reaches the model', async () => {
    const { turnId, release } = await slowTurn('s-withdraw');
    const text = 'STEER-SERVE-WITHDRAWN';
    assert.equal(await lane.steer({ session, commandId: 'cmd-withdraw-1', text }), { ok: true, ref: 'cmd-withdraw-1' });
    assert.equal(await lane.withdraw({ session, commandId: 'cmd-withdraw-1' }), { removed: true });
    release();
    await until(() => turnEnded(turnId) !== undefined, 'turn.ended', 30_000);
    await wait(500);
    assert.ok(requestsOf('s-withdraw').length >= 2, 'the turn went on after the tool');
    assert.is(seen(text).length, 0, 'no request carries the withdrawn text');
    assert.not.ok(facts.some((f) => f.kind === 'delivered' && f.commandId === 'cmd-withdraw-1'));
  });

  test('interrupt withdraws the message still waiting, then stops the turn (cancelled)', async () => {
    const { turnId } = await slowTurn('s-interrupt');
    const text = 'STEER-SERVE-HELD-AT-CANCEL';
    assert.equal(await lane.steer({ session, commandId: 'cmd-held-1', text }), { ok: true, ref: 'cmd-held-1' });
    const from = facts.length;
    const out = await lane.interrupt(session);
    assert.equal(out, { ok: true, withdrawn: ['cmd-held-1'] });
    await until(() => turnEnded(turnId) !== undefined, 'turn.ended', 30_000);
    assert.is(turnEnded(turnId)!.status, 'cancelled');
    await wait(1500);
    // Without the withdrawal the daemon would have run the waiting message as a new prompt.
    assert.is(seen(text).length, 0, 'the held text ran as no prompt');
    assert.equal(
      facts.slice(from).filter((f) => f.kind === 'turn.started'),
      [],
      'no turn started after the cancel',
    );
  });

  test('queue with no turn running: the prompt starts its turn at once, and that start is the receipt', async () => {
    const text = '[[TURN]] [[TOOLS:0]] QUEUE-SERVE-IDLE say done';
    const out = await lane.queue!({ session, commandId: 'cmd-queue-idle', text });
    assert.ok(out.ok && typeof out.ref === 'string', JSON.stringify(out));
    const ref = out.ok ? out.ref! : '';
    await until(() => turnEnded(ref) !== undefined, 'its turn ended', 30_000);
    const d = facts.find((f) => f.kind === 'delivered' && f.commandId === 'cmd-queue-idle');
    assert.equal(d && d.kind === 'delivered' ? d.ref : d, ref);
    assert.ok(
      facts.findIndex((f) => f.kind === 'turn.started' && f.turnId === ref) < facts.indexOf(d!),
      'delivered as its turn started',
    );
    const reqs = requestsOf('QUEUE-SERVE-IDLE');
    assert.ok(reqs.length >= 1);
    const last = messagesOf(reqs[0]!).at(-1);
    assert.ok(last?.role === 'user' && textOf(last).includes(text), 'the first request ends with it');
  });

  test("queue: the daemon's pending prompt, the next turn's first request", async () => {
    const { turnId, release } = await slowTurn('s-queue');
    const text = '[[TURN]] QUEUE-SERVE-ONE next';
    const out = await lane.queue!({ session, commandId: 'cmd-queue-1', text });
    assert.ok(out.ok && typeof out.ref === 'string', JSON.stringify(out));
    const ref = out.ok ? out.ref! : '';
    assert.equal(await lane.queue!({ session, commandId: 'cmd-queue-1', text }), { ok: true, ref }, 'a resend');
    assert.is(seen('QUEUE-SERVE-ONE').length, 0, 'not in the running turn');
    release();
    await until(() => turnEnded(ref) !== undefined, 'the queued turn ended', 30_000);
    const d = facts.find((f) => f.kind === 'delivered' && f.commandId === 'cmd-queue-1');
    assert.equal(d && d.kind === 'delivered' ? d.ref : d, ref);
    assert.ok(facts.indexOf(turnEnded(turnId)!) < facts.indexOf(d!), 'after the running turn ended');
    const reqs = requestsOf('QUEUE-SERVE-ONE');
    assert.ok(reqs.length >= 1);
    assert.ok(!requestsOf('s-queue').some((r) => r.text.includes('QUEUE-SERVE-ONE')), 'never inside the first turn');
    assert.ok(
      messagesOf(reqs[0]!).some((m) => m.role === 'user' && textOf(m).includes(text)),
      `the prompt itself: ${JSON.stringify(messagesOf(reqs[0]!).slice(-2)).slice(0, 1500)}`,
    );
    assert.equal(await lane.withdraw({ session, commandId: 'cmd-queue-1' }), { removed: false }, 'already delivered');
  });

  test('a queued prompt withdrawn while it waits never runs', async () => {
    const { turnId, release } = await slowTurn('s-qwithdraw');
    const out = await lane.queue!({ session, commandId: 'cmd-queue-2', text: '[[TURN]] QUEUE-SERVE-WITHDRAWN' });
    assert.ok(out.ok, JSON.stringify(out));
    const ref = out.ok ? out.ref! : '';
    assert.equal(await lane.withdraw({ session, commandId: 'cmd-queue-2' }), { removed: true });
    // The daemon sends the removed prompt a `turn_complete {stopReason: "cancelled"}` of its own.
    assert.not.ok(turnEnded(ref), 'taken back: no turn of its own ended');
    assert.not.ok(turnEnded(turnId), 'the running turn goes on');
    release();
    await until(() => turnEnded(turnId) !== undefined, 'turn.ended', 30_000);
    await wait(1000);
    assert.is(seen('QUEUE-SERVE-WITHDRAWN').length, 0);
    assert.not.ok(turnEnded(ref));
    assert.not.ok(facts.some((f) => f.kind === 'delivered' && f.commandId === 'cmd-queue-2'));
  });

  test('a permission request is an approval fact, answered over the lane', async () => {
    await daemon.api('POST', `/session/${session}/approval-mode`, { mode: 'auto' });
    const before = facts.length;
    // A compound command: Qwen's auto mode lets a plain `echo` run unasked.
    const gate = join(ws.root, 's-permission.go');
    writeFileSync(gate, '');
    const turnId = await daemon.prompt(session, `[[TURN]] [[WAITFILE:${gate}]] s-permission run one command`);
    await until(() => facts.slice(before).some((f) => f.kind === 'approval'), 'the approval fact', 30_000);
    const a = facts.slice(before).find((f) => f.kind === 'approval');
    assert.ok(a && a.kind === 'approval');
    if (a?.kind !== 'approval') return;
    assert.is(a.session, session);
    assert.is(a.request.kind, 'permission');
    assert.is(a.request.subject, 'run_shell_command');
    assert.match(a.request.detail ?? '', /^while \[ ! -e .*; echo TOOL_RAN_\d+$/, 'D35: what the tool will do');
    assert.equal(a.request.respondVia, ['control', 'oob']);
    assert.equal(await lane.answer!(session, a.approvalId, true), { ok: true });
    await until(() => turnEnded(turnId) !== undefined, 'turn.ended', 30_000);
    const resolved = facts.find((f) => f.kind === 'approval.resolved' && f.approvalId === a.approvalId);
    assert.equal(resolved && resolved.kind === 'approval.resolved' ? resolved.approved : resolved, true);
    const reqs = requestsOf('s-permission');
    assert.ok(
      reqs.some((r) => messagesOf(r).some((m) => m.role === 'tool' && textOf(m).includes('TOOL_RAN_'))),
      'the approved tool ran',
    );
    const again = await lane.answer!(session, a.approvalId, false);
    assert.is(again.ok, false, 'an answered request takes no second answer');
    await daemon.api('POST', `/session/${session}/approval-mode`, { mode: 'yolo' });
  });

  test('a wrong token is refused once, naming the token file; fixed, the lane attaches', async () => {
    const file = join(ws.root, 'wrong.token');
    writeFileSync(file, 'not-the-token\n', { mode: 0o600 });
    const { lane: wrong, said, got } = extraLane({ url: daemon.url, tokenFile: file, retryMs: 50, maxRetryMs: 100 });
    await until(() => said.length > 0, 'the refusal', 10_000);
    await wait(1000);
    assert.is(said.length, 1, `said once, not once per retry: ${said.map((e) => e.message).join(' | ')}`);
    assert.is(said[0]!.code, 'SOURCE_UNAUTHORIZED');
    assert.ok(said[0]!.message.includes(file), said[0]!.message);
    assert.match(said[0]!.message, /HTTP 401/);
    const out = await wrong.steer({ session, commandId: 'cmd-wrong-1', text: 'STEER-SERVE-WRONG-TOKEN' });
    assert.equal(out.ok ? out : [out.reason, out.detail.includes(file)], ['refused', true]);
    assert.is(said.length, 1);
    assert.equal(got, [], 'nothing reached, nothing lost');
    // A group- or world-readable file is refused before it is sent.
    chmodSync(file, 0o644);
    const loose = await wrong.steer({ session, commandId: 'cmd-wrong-2', text: 'x' });
    assert.equal(loose.ok ? loose : [loose.reason, /chmod 600/.test(loose.detail)], ['refused', true]);
    writeFileSync(file, `${daemon.token}\n`);
    chmodSync(file, 0o600);
    await until(() => wrong.reaches(session), 'attached with the fixed token', 10_000);
    assert.ok(got.some((f) => f.kind === 'attached' && f.session === session));
    assert.is(seen('STEER-SERVE-WRONG-TOKEN').length, 0);
  });

  test('a killed daemon is one lost fact; restarted, the lane attaches again', async () => {
    const w2 = workspace('aep-qwen-serve-restart-');
    const d1 = await startQwenServe(w2, mock.baseUrl);
    extra.push({ ws: w2, daemon: d1 });
    const s1 = await d1.session('yolo');
    const {
      lane: l2,
      said,
      got,
    } = extraLane({
      url: d1.url,
      tokenFile: d1.tokenFile,
      pollMs: 100,
      retryMs: 50,
      maxRetryMs: 200,
    });
    await until(() => l2.reaches(s1), 'attached', 30_000);
    await d1.kill('SIGKILL');
    await until(() => got.some((f) => f.kind === 'lost'), 'lost', 10_000);
    assert.not.ok(l2.reaches(s1));
    const out = await l2.steer({ session: s1, commandId: 'cmd-lost-1', text: 'x' });
    assert.equal(out.ok ? out : out.reason, 'unreachable');
    await wait(1500);
    assert.is(got.filter((f) => f.kind === 'lost').length, 1, 'lost once, not once per retry');
    assert.is(said.length, 1, `one message: ${said.map((e) => e.message).join(' | ')}`);
    assert.is(said[0]!.code, 'SOURCE_UNREACHABLE');
    // The same port, the same token file: the lane finds the new daemon's session.
    const d2 = await startQwenServe(w2, mock.baseUrl, { port: d1.port, token: d1.token });
    extra.push({ daemon: d2 });
    const s2 = await d2.session('yolo');
    await until(() => l2.reaches(s2), 'attached after the restart', 30_000);
    const lost = got.findIndex((f) => f.kind === 'lost');
    assert.ok(got.slice(lost).some((f) => f.kind === 'attached' && f.session === s2));
    assert.is(got.filter((f) => f.kind === 'lost').length, 1);
  });
}

test.run();
