// The `qwen serve` lane (D30–D33) through the whole stack: the real Qwen Code 0.24.4 daemon with
// `--require-auth` against the loopback mock Chat Completions API, its session's hooks posted to
// this project's adapter (`qwen-code --serve URL --serve-token-file F`), instructions sent through
// the relay as a consumer sends them. Hooks and lane speak of one session id; a `steer` sent while
// a slow tool runs is in the same turn's next model request, delivered on the daemon's receipt
// through the `serve` lane; `moment` goes through the hooks; `queue` becomes a daemon prompt (the
// first model request of the turn after the running one, kept by the adapter until the running one
// ends, or of the turn it starts when none runs), taken back while it waits; a withdrawn steer never
// reaches the model; a cancel stops the turn; the audit tells the lanes apart; a killed daemon is
// said once and the hook lane goes on
// (it reports the session's end, and a plain `qwen` run is steered through its hooks as before).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { renderText } from '../../src/audit/report.js';
import type { AepCommand, AepEvent } from '../../src/protocol/index.js';
import { qwenServeSuite } from '../support/qwen-serve-suite.js';
import { until } from '../support/until.js';
import { bodyHas, chatMessagesOf, chatTextOf, turnPromptOf } from '../support/vendor-e2e.js';

const INJECTED = '[User message received during tool execution]: ';
const INSTRUCT = 'x.qwen-code.control.instruct';
const DELIVERED = 'x.qwen-code.instruction.delivered';
const DROPPED = 'x.qwen-code.instruction.dropped';

let session: string;
const { e2e, serve, all, slowTurn } = qwenServeSuite('qwen serve adapter', () => session);

const of = (type: string, cause?: string): AepEvent | undefined => e2e.stack.find(session, type, cause);

const instruct = (text: string, delivery: string): AepCommand =>
  e2e.stack.command(session, INSTRUCT, { text, delivery });
async function accepted(cmd: AepCommand): Promise<AepCommand> {
  const settled = await e2e.stack.send(cmd);
  assert.is(settled.outcome, 'accepted', JSON.stringify(settled));
  return cmd;
}

/** Resolves once the daemon says no turn of the session runs. */
const daemonIdle = (): Promise<void> =>
  until(
    async () => (await serve().api('GET', `/session/${session}/turns/current`)).body?.['state'] !== 'running',
    'the daemon to run no turn',
    20_000,
  );
const finishedAfter = (n: number) => e2e.stack.waitFor('the turn finished', () => all('run.finished')[n]);

if (e2e.installed) {
  test.before(async () => {
    e2e.stack.evidence.set('qwen serve output', () => serve().output().slice(-4000));
    session = await serve().session('yolo');
  });

  test("hooks and the serve lane share the daemon's session id; the roster names both lanes", async () => {
    await serve().prompt(session, '[[TURN]] [[TOOLS:0]] q-first say done');
    await e2e.stack.waitFor('the session seen through its hooks', () => of('session.started') ?? of('run.started'));
    await finishedAfter(0);
    await e2e.stack.waitFor('the lane reaches the session', () =>
      all('x.qwen-code.session.described').find((e) => (e.data?.['lanes'] as string[] | undefined)?.includes('serve')),
    );
    const entry = (await e2e.stack.consumer.roster()).find((r) => r.session === session);
    assert.equal(entry?.lanes, ['hook', 'serve'], 'the roster names both lanes');
    assert.equal(
      (entry?.control as { deliveries?: string[] } | undefined)?.deliveries,
      ['moment', 'steer', 'queue'],
      "the adapter's hello declares the steer and queue the serve lane adds",
    );
    const table = await e2e.sessions();
    const row = table.split('\n').find((l) => l.startsWith(session));
    assert.match(row ?? table, 'hook, serve', '`aep-steer sessions` names both lanes');
    assert.equal(e2e.stack.errors, []);
  });

  test("steer while a slow tool runs: the same turn's next request, delivered through the serve lane; a resend is one delivery", async () => {
    const { release, finished } = await slowTurn('q-steer');
    const text = `STEER-SERVE-${session.slice(0, 8)}`;
    const cmd = await accepted(instruct(text, 'steer'));
    const again = await e2e.stack.send(cmd);
    assert.is(again.outcome, 'accepted', 'the resend gets the recorded ack again');
    release();
    const d = await e2e.stack.waitFor('delivered', () => of(DELIVERED, cmd.id));
    assert.equal([d.data?.['delivery'], d.data?.['lane'], d.data?.['ref']], ['steer', 'serve', cmd.id]);
    const end = await finishedAfter(finished);
    assert.ok(d.seq! < end.seq!, 'delivered before the turn ended');
    const reqs = e2e.requestsOf('q-steer');
    assert.ok(reqs.length >= 2, `the tool round made a second request (${reqs.length})`);
    assert.not.ok(bodyHas(reqs[0]!.body, text), 'not in the request that asked for the tool');
    const msgs = chatMessagesOf(reqs[1]!.body);
    const at = msgs.findIndex((m) => m.role === 'user' && chatTextOf(m).includes(`${INJECTED}${text}`));
    assert.ok(at > 0, `${INJECTED}${text} in the next request: ${JSON.stringify(msgs.slice(-3)).slice(0, 1500)}`);
    assert.is(msgs[at - 1]!.role, 'tool', "right after the running tool's result");
    assert.is(reqs.at(-1)!.text.split(text).length - 1, 1, 'injected once');
    assert.is(all(DELIVERED).filter((e) => e.cause === cmd.id).length, 1, 'one delivery');
    assert.not.ok(of(DROPPED, cmd.id));
  });

  test('steer with no turn running is refused session-idle, and reaches no request', async () => {
    // The daemon ends the turn a little after the Stop hook (a message it takes in between runs
    // as a prompt of its own, the next test): wait until it says no turn runs. Its stream may tell
    // the lane a moment later: a steer in between is answered idle by the daemon and dropped turn-ended.
    await daemonIdle();
    const until = Date.now() + 10_000;
    const raced: string[] = [];
    let settled = await e2e.stack.send(instruct('STEER-SERVE-IDLE', 'steer'));
    while (settled.outcome === 'accepted' && Date.now() < until) {
      raced.push(settled.ack.cause!);
      await new Promise((r) => setTimeout(r, 250));
      settled = await e2e.stack.send(instruct('STEER-SERVE-IDLE', 'steer'));
    }
    assert.equal(settled.outcome === 'rejected' ? [settled.reason, settled.code] : settled, [
      'refused',
      'session-idle',
    ]);
    for (const cause of raced) {
      const d = await e2e.stack.waitFor('the raced steer dropped', () => of(DROPPED, cause));
      assert.is(d.data?.['reason'], 'turn-ended');
      assert.not.ok(of(DELIVERED, cause));
    }
    assert.is(e2e.withText('STEER-SERVE-IDLE').length, 0);
  });

  test('a steer withdrawn before injection is dropped withdrawn and never reaches the model', async () => {
    const { release, finished } = await slowTurn('q-withdraw');
    const text = `WITHDRAWN-SERVE-${session.slice(0, 8)}`;
    const cmd = await accepted(instruct(text, 'steer'));
    const w = await accepted(e2e.stack.command(session, 'x.qwen-code.control.withdraw', { instruction: cmd.id }, null));
    const dropped = await e2e.stack.waitFor('dropped withdrawn', () => all(DROPPED).find((e) => e.subject === cmd.id));
    assert.equal([dropped.cause, dropped.data?.['reason']], [w.id, 'withdrawn']);
    release();
    await finishedAfter(finished);
    assert.ok(e2e.requestsOf('q-withdraw').length >= 2, 'the turn went on after the tool');
    assert.is(e2e.withText(text).length, 0, 'no request carries the withdrawn text');
    assert.not.ok(of(DELIVERED, cmd.id));
  });

  test('a steer taken as the turn winds down runs as a prompt of its own: delivered on its receipt, never dropped', async () => {
    // The turn's last model request is held: no tool round follows, so the message is never
    // injected; the daemon runs it as the next prompt, whose start is the receipt.
    const hold = e2e.mock.hold((r) => e2e.turnOf(r).includes('q-tail'));
    const finished = all('run.finished').length;
    await serve().prompt(session, '[[TURN]] [[TOOLS:0]] q-tail say done');
    await hold.arrived;
    const text = `TAIL-SERVE-${session.slice(0, 8)}`;
    let cmd = instruct(text, 'steer');
    // The lane's stream may show the turn a moment after the model was asked.
    for (let settled = await e2e.stack.send(cmd); settled.outcome !== 'accepted'; settled = await e2e.stack.send(cmd)) {
      assert.is('code' in settled ? settled.code : settled.outcome, 'session-idle', JSON.stringify(settled));
      await new Promise((r) => setTimeout(r, 100));
      cmd = instruct(text, 'steer');
    }
    hold.release();
    const d = await e2e.stack.waitFor('delivered', () => of(DELIVERED, cmd.id));
    assert.equal([d.data?.['delivery'], d.data?.['lane'], d.data?.['ref']], ['steer', 'serve', cmd.id]);
    await finishedAfter(finished + 1);
    assert.not.ok(of(DROPPED, cmd.id), 'never reported dropped');
    assert.ok(e2e.withText(text).length > 0, 'the model read it');
    assert.not.ok(
      e2e.requestsOf('q-tail').some((r) => bodyHas(r.body, `${INJECTED}${text}`)),
      'not injected into the turn',
    );
  });

  test('moment goes through the hooks in a daemon session', async () => {
    const { release, finished } = await slowTurn('q-moment');
    const tag = session.slice(0, 8);
    const moment = await accepted(instruct(`MOMENT-SERVE-${tag}`, 'moment'));
    release();
    const d = await e2e.stack.waitFor('moment delivered', () => of(DELIVERED, moment.id));
    assert.equal([d.data?.['delivery'], d.data?.['moment'], d.data?.['lane']], ['moment', 'PostToolUse', undefined]);
    await finishedAfter(finished);
    const reqs = e2e.requestsOf('q-moment');
    assert.not.ok(bodyHas(reqs[0]!.body, `MOMENT-SERVE-${tag}`), 'not in the request that asked for the tool');
    // Daemon sessions carry the hook's context as a user message of the turn's next request.
    assert.ok(bodyHas(reqs[1]?.body, `MOMENT-SERVE-${tag}`), "in the same turn's next request");
  });

  test("queue sent mid-turn: none of the running turn's requests, the first request of the next turn, through the serve lane; a resend is one delivery", async () => {
    const { release, finished } = await slowTurn('q-queue');
    const tag = `QUEUE-SERVE-${session.slice(0, 8)}`;
    const text = `[[TURN]] [[TOOLS:0]] ${tag} say done`;
    const cmd = await accepted(instruct(text, 'queue'));
    const again = await e2e.stack.send(cmd);
    assert.is(again.outcome, 'accepted', 'the resend gets the recorded ack again');
    assert.is(e2e.withText(tag).length, 0, 'not while the tool runs');
    // D44: the adapter keeps it while the turn runs; the daemon holds no prompt for it yet.
    const r = await serve().api('GET', `/session/${session}/pending-prompts`);
    const pending = (r.body?.['pendingPrompts'] as { text?: string }[] | undefined) ?? [];
    assert.not.ok(
      pending.some((p) => p.text?.includes(tag)),
      'not handed to the daemon during the turn',
    );
    release();
    const d = await e2e.stack.waitFor('delivered', () => of(DELIVERED, cmd.id));
    const end = await finishedAfter(finished);
    assert.equal([d.data?.['delivery'], d.data?.['lane']], ['queue', 'serve']);
    assert.match(String(d.data?.['ref']), /\S/, "the ref is the daemon's prompt id");
    assert.ok(end.seq! < d.seq!, 'delivered once the running turn ended');
    await finishedAfter(finished + 1);
    assert.ok(e2e.requestsOf('q-queue').length >= 2, 'the running turn went on after the tool');
    assert.not.ok(
      e2e.requestsOf('q-queue').some((r) => bodyHas(r.body, tag)),
      "in none of the running turn's requests",
    );
    const reqs = e2e.withText(tag);
    assert.ok(reqs.length >= 1);
    const msgs = chatMessagesOf(reqs[0]!.body);
    assert.ok(
      msgs.at(-1)?.role === 'user' && chatTextOf(msgs.at(-1)!).includes(text),
      `the next turn's first request ends with it: ${JSON.stringify(msgs.slice(-2)).slice(0, 1500)}`,
    );
    assert.is(turnPromptOf(reqs[0]!.body), chatTextOf(msgs.at(-1)!), 'it is the turn the request belongs to');
    assert.is(all(DELIVERED).filter((e) => e.cause === cmd.id).length, 1, 'one delivery');
    assert.not.ok(of(DROPPED, cmd.id));
    const w = await e2e.stack.send(
      e2e.stack.command(session, 'x.qwen-code.control.withdraw', { instruction: cmd.id }, null),
    );
    assert.equal(w.outcome === 'rejected' ? w.code : w, 'already-delivered', 'withdrawn after: already delivered');
  });

  test('a queue withdrawn while it waits is dropped withdrawn and never reaches the model; the one behind it runs', async () => {
    const { release, finished } = await slowTurn('q-qwithdraw');
    const tag = session.slice(0, 8);
    const gone = `QUEUE-WITHDRAWN-${tag}`;
    const kept = `QUEUE-KEPT-${tag}`;
    const first = await accepted(instruct(`[[TURN]] [[TOOLS:0]] ${gone} say done`, 'queue'));
    const second = await accepted(instruct(`[[TURN]] [[TOOLS:0]] ${kept} say done`, 'queue'));
    const w = await accepted(
      e2e.stack.command(session, 'x.qwen-code.control.withdraw', { instruction: first.id }, null),
    );
    const dropped = await e2e.stack.waitFor('dropped withdrawn', () =>
      all(DROPPED).find((e) => e.subject === first.id),
    );
    assert.equal([dropped.cause, dropped.data?.['reason']], [w.id, 'withdrawn']);
    release();
    // The daemon runs its queue in order: the withdrawn prompt would have run before this one.
    const d = await e2e.stack.waitFor('the one behind delivered', () => of(DELIVERED, second.id));
    assert.equal([d.data?.['delivery'], d.data?.['lane']], ['queue', 'serve']);
    await finishedAfter(finished + 1);
    assert.is(e2e.withText(gone).length, 0, 'no request carries the withdrawn text');
    assert.ok(e2e.withText(kept).length > 0, 'the next one ran');
    assert.not.ok(of(DELIVERED, first.id));
    assert.equal(
      all('run.finished').length,
      finished + 2,
      'two turns: the running one and the queue kept (the withdrawn one ran none)',
    );
  });

  test("queue with no turn running starts a turn of its own at once: its text is that turn's first request", async () => {
    await daemonIdle();
    const finished = all('run.finished').length;
    const tag = `QUEUE-IDLE-${session.slice(0, 8)}`;
    const text = `[[TURN]] [[TOOLS:0]] ${tag} say done`;
    const cmd = await accepted(instruct(text, 'queue'));
    const d = await e2e.stack.waitFor('delivered', () => of(DELIVERED, cmd.id));
    assert.equal([d.data?.['delivery'], d.data?.['lane']], ['queue', 'serve']);
    await finishedAfter(finished);
    const reqs = e2e.withText(tag);
    assert.ok(reqs.length >= 1);
    const msgs = chatMessagesOf(reqs[0]!.body);
    assert.ok(
      msgs.at(-1)?.role === 'user' && chatTextOf(msgs.at(-1)!).includes(text),
      'the first request ends with it',
    );
    assert.is(all(DELIVERED).filter((e) => e.cause === cmd.id).length, 1, 'one delivery');
  });

  test('control.cancel {scope: run} stops the turn through the lane; run.cancelled names the cancel', async () => {
    await slowTurn('q-cancel');
    const cancel = await accepted(e2e.stack.command(session, 'control.cancel', { scope: 'run' }, null));
    const cancelled = await e2e.stack.waitFor('run.cancelled', () => of('run.cancelled', cancel.id));
    assert.is(cancelled.data?.['by'], 'control');
    const after = await e2e.stack.send(instruct('after cancel', 'steer'));
    assert.equal(after.outcome === 'rejected' ? after.code : after, 'session-idle', 'the turn is over');
  });

  test('the audit of the adapter log is clean and tells the serve lane from the hook lane', async () => {
    const r = await e2e.auditClean();
    const mine = r.instructions.filter((i) => i.session === session && i.status === 'delivered');
    const steer = mine.find((i) => i.delivery === 'steer');
    const moment = mine.find((i) => i.delivery === 'moment');
    const queued = mine.filter((i) => i.delivery === 'queue');
    assert.equal([steer?.delivered?.lane, steer?.delivered?.ref], ['serve', steer?.id]);
    assert.ok(queued.length >= 3, `the queues delivered: ${queued.length}`);
    for (const q of queued) assert.equal([q.delivered?.lane, typeof q.delivered?.ref], ['serve', 'string']);
    const withdrawn = r.instructions.filter((i) => i.session === session && i.dropped?.reason === 'withdrawn');
    assert.ok(
      withdrawn.some((i) => i.delivery === 'queue' && i.status === 'dropped'),
      `the withdrawn queue: ${JSON.stringify(withdrawn.map((i) => [i.delivery, i.status]))}`,
    );
    assert.equal([moment?.delivered?.lane, moment?.delivered?.moment], [undefined, 'PostToolUse']);
    const text = renderText(r);
    assert.match(text, `${steer!.id}  session ${session}`);
    const line = (id: string) => text.split('\n').find((l) => l.includes(id)) ?? '';
    assert.match(line(steer!.id), 'through the serve lane');
    assert.match(line(queued[0]!.id), 'through the serve lane');
    assert.match(line(moment!.id), 'at PostToolUse');
    assert.not.match(line(moment!.id), 'serve lane');
  });

  test('the daemon killed mid-session: said once; the hook lane goes on (a moment delivers through hooks)', async () => {
    await slowTurn('q-dies');
    const kept = await accepted(instruct('KEPT-AFTER-LOSS', 'moment'));
    const errorsBefore = e2e.stack.errors.length;
    await serve().kill('SIGKILL');
    await e2e.stack.waitFor('the lane is gone', () =>
      all('x.qwen-code.session.described').find((e) => JSON.stringify(e.data?.['lanes']) === '["hook"]'),
    );
    await new Promise((r) => setTimeout(r, 1500));
    const said = e2e.stack.errors.slice(errorsBefore);
    assert.is(said.length, 1, `said once: ${said.join(' | ')}`);
    assert.match(said[0]!, 'serve');
    // The daemon's agent fires SessionEnd as it dies: the hooks end the session and what waited
    // for a moment is dropped session-ended; otherwise it keeps its course. Never delivery-unknown.
    const gone = of(DROPPED, kept.id);
    if (gone !== undefined) {
      assert.is(gone.data?.['reason'], 'session-ended');
      assert.ok(of('session.ended'), 'the hooks reported the end');
    }
    assert.not.ok(of(DELIVERED, kept.id));
    // A plain `qwen` run on the same adapter is steered through its hooks as before.
    const { session: other, run, release } = await e2e.slowRun('q-plain');
    const text = `MOMENT-PLAIN-${other.slice(0, 8)}`;
    const m = e2e.stack.command(other, INSTRUCT, { text, delivery: 'moment' });
    assert.is((await e2e.stack.send(m)).outcome, 'accepted');
    release();
    const result = await run;
    assert.is(result.code, 0, result.stderr.slice(-2000));
    const d = await e2e.stack.waitFor('delivered', () => e2e.stack.find(other, DELIVERED, m.id));
    assert.equal([d.data?.['moment'], d.data?.['lane']], ['PostToolUse', undefined]);
    assert.ok(e2e.withText(text).length > 0, 'the model saw it');
    assert.is(e2e.stack.errors.length, errorsBefore + 1, `nothing more said: ${e2e.stack.errors.join(' | ')}`);
  });
}

test.run();
