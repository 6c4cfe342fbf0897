// opencode 1.18.33 (D50) through the whole stack: the real `opencode serve`, password-protected,
// against the loopback mock Chat Completions API; this project's adapter follows it
// (`opencode --serve URL --serve-password-file F`) and the instructions go through the relay as
// a consumer sends them. With a slow tool call in flight: a steer is in the same turn's next
// model request, a queue in the first request of the next turn, a withdrawn queue never reaches
// the model, a start on idle opens a turn, a cancel stops the turn while what waits stays queued,
// a resend of one command id is delivered once; the stream validates and the audit is clean.
// Bad input: a wrong password is said once with the fix; a server that dies mid-session is said
// once and a queued instruction keeps a true outcome.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { auditFiles } from '../../src/audit/audit.js';
import { validateEvent } from '../../src/protocol/validate.js';
import type { AepCommand, AepEvent } from '../../src/protocol/index.js';
import { startMockOpenAi, type MockOpenAi } from '../support/mock-openai.js';
import { opencodeBinary, startOpencodeServe, type OpencodeServe } from '../support/opencode-serve.js';
import { chatMessagesOf, chatTextOf, startVendorStack, vendorMissing, workspace } from '../support/vendor-e2e.js';
import type { VendorStack } from '../support/vendor-e2e.js';

const INSTRUCT = 'x.opencode.control.instruct';
const DELIVERED = 'x.opencode.instruction.delivered';
const DROPPED = 'x.opencode.instruction.dropped';

let mock: MockOpenAi;
let server: OpencodeServe;
let stack: VendorStack;
let session: string;
const ws = workspace('aep-opencode-');

const of = (type: string, cause?: string): AepEvent | undefined => stack.find(session, type, cause);
const all = (type: string): AepEvent[] => stack.events.filter((e) => e.session === session && e.type === type);
const instruct = (data: Record<string, unknown>): AepCommand => stack.command(session, INSTRUCT, data);
async function accepted(cmd: AepCommand): Promise<AepCommand> {
  const settled = await stack.send(cmd);
  assert.is(settled.outcome, 'accepted', JSON.stringify(settled));
  return cmd;
}
const withText = (text: string) => mock.modelRequests().filter((r) => r.text.includes(text));
const requestsOf = (tag: string) =>
  mock
    .modelRequests()
    .filter((r) => chatMessagesOf(r.body).some((m) => m.role === 'user' && chatTextOf(m).includes(tag)));

/** A prompt from the person's client whose shell call waits for a file; resolves once the tool call is on the stream. */
async function slowTurn(tag: string): Promise<{ release: () => void; finished: number }> {
  const gate = join(ws.root, `${tag}.go`);
  const tools = all('tool.requested').length;
  const finished = all('run.finished').length;
  await server.prompt(session, `[[TURN]] [[WAITFILE:${gate}]] ${tag} run the slow command`);
  await stack.waitFor(`${tag}: the slow tool call`, () => all('tool.requested')[tools]);
  return { release: () => writeFileSync(gate, ''), finished };
}
const finishedAfter = (n: number) => stack.waitFor('the turn finished', () => all('run.finished')[n]);

if (
  !vendorMissing(
    opencodeBinary(),
    'opencode serve',
    'opencode 1.18.33 is not installed in .vendor-clis (run scripts/install-vendor-cli.sh opencode)',
  )
) {
  test.before(async () => {
    mock = await startMockOpenAi();
    server = await startOpencodeServe(ws, mock.baseUrl);
    stack = await startVendorStack('opencode', {}, { serve: server.url, servePasswordFile: server.passwordFile });
    stack.evidence.set('opencode serve output', () => server.output().slice(-4000));
    session = await server.session();
  });
  test.after(async () => {
    await stack?.close();
    await server?.kill();
    await mock?.close();
    rmSync(ws.root, { recursive: true, force: true });
  });

  test("the adapter follows the server's sessions: one opened there is on the stream, reached by the serve lane", async () => {
    await stack.waitFor('session.started', () => of('session.started'));
    // The first turn on a fresh server also loads its provider: a short one, seen as a run from start to finish.
    await server.prompt(session, '[[TURN]] [[TOOLS:0]] o-first say done');
    await finishedAfter(0);
    assert.ok(of('run.started'), 'the turn started as a run');
    await stack.waitFor('the lane reaches the session', () =>
      all('x.opencode.session.described').find((e) => (e.data?.['lanes'] as string[] | undefined)?.includes('serve')),
    );
    const entry = (await stack.consumer.roster()).find((r) => r.session === session);
    assert.ok(entry?.lanes?.includes('serve'), JSON.stringify(entry));
    assert.equal(stack.errors, []);
  });

  test("steer lands in the same turn's next request, with the server's receipt", async () => {
    const { release, finished } = await slowTurn('o-steer');
    const text = `STEER-OC-${session.slice(-8)}`;
    const cmd = await accepted(instruct({ text, delivery: 'steer' }));
    const again = await stack.send(cmd);
    assert.is(again.outcome, 'accepted', 'the resend gets the recorded ack again');
    release();
    const d = await stack.waitFor('delivered', () => of(DELIVERED, cmd.id));
    assert.equal([d.data?.['delivery'], d.data?.['lane']], ['steer', 'serve']);
    assert.match(String(d.data?.['ref']), /^msg_/);
    await finishedAfter(finished);
    const reqs = requestsOf('o-steer');
    assert.ok(reqs.length >= 2, `the tool round made a second request (${reqs.length})`);
    assert.not.ok(reqs[0]!.text.includes(text), 'not in the request that asked for the tool');
    const next = reqs.find((r) => r.text.includes(text))!;
    const msgs = chatMessagesOf(next.body);
    const at = msgs.findIndex((m) => m.role === 'user' && chatTextOf(m).includes(text));
    assert.ok(at > 0 && msgs.slice(0, at).some((m) => m.role === 'tool'), 'after the running tool result');
    assert.ok(requestsOf('o-steer').indexOf(next) >= 1, "in the same turn's next request");
    assert.is(all(DELIVERED).filter((e) => e.cause === cmd.id).length, 1, 'one delivery');
    assert.is(next.text.split(text).length - 1, 1, 'once in the request');
  });

  test('queue lands in the first request of the next turn, never in the running one', async () => {
    const { release, finished } = await slowTurn('o-queue');
    const text = `QUEUE-OC-${session.slice(-8)}`;
    const cmd = await accepted(instruct({ text, delivery: 'queue' }));
    release();
    const d = await stack.waitFor('delivered', () => of(DELIVERED, cmd.id));
    assert.equal([d.data?.['delivery'], d.data?.['lane']], ['queue', 'serve']);
    await finishedAfter(finished + 1);
    const running = requestsOf('o-queue').filter((r) => !r.text.includes(text));
    assert.ok(running.length >= 2, 'the running turn made its requests without it');
    const first = withText(text)[0]!;
    const msgs = chatMessagesOf(first.body);
    assert.ok(
      msgs.at(-1)?.role === 'user' && chatTextOf(msgs.at(-1)!).includes(text),
      'the first request ends with it',
    );
  });

  test('a queue withdrawn before it is handed over never reaches the model', async () => {
    const { release, finished } = await slowTurn('o-withdraw');
    const text = `WITHDRAWN-OC-${session.slice(-8)}`;
    const cmd = await accepted(instruct({ text, delivery: 'queue' }));
    const w = await accepted(stack.command(session, 'x.opencode.control.withdraw', { instruction: cmd.id }, null));
    const dropped = await stack.waitFor('dropped withdrawn', () => all(DROPPED).find((e) => e.subject === cmd.id));
    assert.equal([dropped.cause, dropped.data?.['reason']], [w.id, 'withdrawn']);
    release();
    await finishedAfter(finished);
    await new Promise((r) => setTimeout(r, 500));
    assert.is(withText(text).length, 0, 'no request carries the withdrawn text');
  });

  test('a start on the idle session opens a turn with the text as its prompt, delivered started', async () => {
    const finished = all('run.finished').length;
    const text = `[[TURN]] [[TOOLS:0]] START-OC-${session.slice(-8)} say done`;
    const cmd = await accepted(instruct({ text, idle: 'start' }));
    const d = await stack.waitFor('delivered', () => of(DELIVERED, cmd.id));
    assert.is(d.data?.['started'], true, JSON.stringify(d.data));
    await finishedAfter(finished);
    assert.ok(withText(text).length >= 1, 'the model saw it');
  });

  test('cancel stops the turn and what waits stays queued', async () => {
    const { release } = await slowTurn('o-cancel');
    const text = `KEPT-OC-${session.slice(-8)}`;
    const kept = await accepted(instruct({ text, delivery: 'queue' }));
    const before = requestsOf('o-cancel').length;
    const cancel = await accepted(stack.command(session, 'control.cancel', { scope: 'run' }, null));
    const cancelled = await stack.waitFor('run.cancelled', () => of('run.cancelled', cancel.id));
    assert.is(cancelled.data?.['by'], 'control');
    release();
    await new Promise((r) => setTimeout(r, 1000));
    assert.is(requestsOf('o-cancel').length, before, 'no request after the cancel');
    assert.not.ok(of(DELIVERED, kept.id), 'the queued one was not handed over by the stop');
    assert.not.ok(of(DROPPED, kept.id), 'nor dropped');
    // The next turn the person starts ends, and what waited goes then.
    const finished = all('run.finished').length;
    await server.prompt(session, `[[TURN]] [[TOOLS:0]] o-after say done`);
    const d = await stack.waitFor('the kept queue delivered', () => of(DELIVERED, kept.id));
    assert.is(d.data?.['delivery'], 'queue');
    await finishedAfter(finished + 1);
    assert.ok(withText(text).length >= 1, 'the model saw it after the next turn');
  });

  test('the stream validates against the AEP schemas, and the audit of the adapter log is clean', async () => {
    const mine = stack.events.filter((e) => e.session === session);
    for (const e of mine) assert.equal(validateEvent(e), [], `${e.type} ${JSON.stringify(e).slice(0, 400)}`);
    const r = await auditFiles([stack.logPath]);
    assert.equal(r.violations, []);
    const delivered = r.instructions.filter((i) => i.session === session && i.status === 'delivered');
    assert.ok(delivered.length >= 4, `delivered: ${delivered.length}`);
    for (const i of delivered) assert.is(i.delivered?.lane, 'serve');
  });

  test('a wrong password is said once, naming the file and the fix', async () => {
    const bad = join(ws.root, 'wrong.password');
    writeFileSync(bad, 'not-the-password', { mode: 0o600 });
    const other = await startVendorStack('opencode', {}, { serve: server.url, servePasswordFile: bad });
    try {
      await other.waitFor('the refusal', () => (other.errors.length > 0 ? other.errors : undefined));
      await new Promise((r) => setTimeout(r, 1500));
      assert.is(other.errors.length, 1, other.errors.join(' | '));
      assert.match(other.errors[0]!, 'SOURCE_UNAUTHORIZED');
      assert.match(other.errors[0]!, bad);
    } finally {
      await other.close();
    }
  });

  test('the server dies mid-session: said once; a queued instruction keeps a true outcome', async () => {
    await slowTurn('o-dies');
    const cmd = await accepted(instruct({ text: 'QUEUED-AT-LOSS', delivery: 'queue' }));
    const before = stack.errors.length;
    await server.kill('SIGKILL');
    await stack.waitFor('the loss said', () => (stack.errors.length > before ? true : undefined));
    await new Promise((r) => setTimeout(r, 1500));
    const said = stack.errors.slice(before);
    assert.is(said.length, 1, `said once: ${said.join(' | ')}`);
    assert.match(said[0]!, 'opencode server');
    assert.not.ok(of(DELIVERED, cmd.id), 'never said delivered');
  });
}

test.run();
