// The opencode server lane (D50) against a stand-in shaped like opencode 1.18.33's server: the
// session seen is reached; steer and start go to the V2 prompt route with `delivery` and a
// `msg_` id, and are delivered on `session.next.prompted`; queues handed over together (the core
// keeps them during a turn, D44) go to the server's queue as one prompt, their texts in order;
// cancel is `interrupt`, or the V1 abort where that is missing; a permission request is a held
// request answered on the server; a wrong password is said once, naming the file.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SteeringError } from '../../../src/protocol/errors.js';
import type { LaneFact } from '../../../src/streams/lane.js';
import { OpencodeLane } from '../../../src/adapters/opencode/lane.js';
import { OpencodeServer } from '../../../src/adapters/opencode/server.js';
import { startOpencodeStandin, type OpencodeStandin } from '../../support/opencode-standin.js';
import { until } from '../../support/until.js';

const S = 'ses_standin0001';
const dir = mkdtempSync(join(tmpdir(), 'aep-opencode-lane-'));
const passwordFile = join(dir, 'password');
writeFileSync(passwordFile, 'sekret');
chmodSync(passwordFile, 0o600);

interface Rig {
  standin: OpencodeStandin;
  server: OpencodeServer;
  lane: OpencodeLane;
  facts: LaneFact[];
  errors: SteeringError[];
  close(): Promise<void>;
}

async function rig(o: { password?: string; file?: string; pollMs?: number } = {}): Promise<Rig> {
  const standin = await startOpencodeStandin(o.password === undefined ? {} : { password: o.password });
  standin.sessions.add(S);
  const errors: SteeringError[] = [];
  const server = new OpencodeServer({
    url: standin.url,
    ...(o.file === undefined ? {} : { passwordFile: o.file }),
    pollMs: o.pollMs ?? 50,
    retryMs: 20,
    maxRetryMs: 100,
    onError: (e) => errors.push(e),
  });
  const lane = new OpencodeLane(server);
  const facts: LaneFact[] = [];
  lane.facts$.subscribe((f) => facts.push(f));
  server.start();
  return {
    standin,
    server,
    lane,
    facts,
    errors,
    async close() {
      await lane.close();
      await server.close();
      await standin.close();
    },
  };
}

/** The person's prompt opens a turn: admitted, then folded in; the session runs. */
function turn(r: Rig, messageID: string): void {
  r.standin.running.add(S);
  r.standin.emit('session.next.prompted', S, { messageID, prompt: { text: 'go' }, delivery: 'steer' });
}
/** The turn's last step ends and the session no longer runs. */
function endTurn(r: Rig, finish = 'stop'): void {
  r.standin.running.delete(S);
  r.standin.emit('session.next.step.ended', S, { assistantMessageID: 'msg_x', finish });
}
const prompts = (r: Rig) => r.standin.calls.filter((c) => c.path === `/api/session/${S}/prompt`);
const kinds = (r: Rig) => r.facts.map((f) => f.kind);

test('a listed session is reached; a steer is a V2 prompt with delivery steer, delivered on prompted', async () => {
  const r = await rig();
  try {
    await until(() => r.lane.reaches(S), 'the lane reaches the session');
    assert.ok(r.facts.some((f) => f.kind === 'attached' && f.session === S));
    const idle = await r.lane.steer({ session: S, commandId: 'c-idle', text: 'early' });
    assert.equal(idle.ok ? idle : idle.reason, 'idle', 'no turn: a steer starts none');
    turn(r, 'msg_person1');
    await until(() => r.server.turnOf(S) === 'msg_person1', 'the turn opens');
    const o = await r.lane.steer({ session: S, commandId: 'c-steer', text: 'STEER' });
    assert.ok(o.ok && o.ref?.startsWith('msg_'), JSON.stringify(o));
    const call = prompts(r).at(-1)!;
    assert.equal([call.body.delivery, call.body.prompt.text, call.body.id], ['steer', 'STEER', o.ok ? o.ref : '']);
    const again = await r.lane.steer({ session: S, commandId: 'c-steer', text: 'STEER' });
    assert.equal(again, o, 'a resend is answered without sending again');
    assert.is(prompts(r).length, 1);
    r.standin.emit('session.next.prompted', S, { messageID: call.body.id, prompt: { text: 'STEER' } });
    await until(() => r.facts.some((f) => f.kind === 'delivered'), 'the receipt');
    const d = r.facts.find((f) => f.kind === 'delivered') as Extract<LaneFact, { kind: 'delivered' }>;
    assert.equal([d.commandId, d.ref, d.started], ['c-steer', call.body.id, undefined]);
    endTurn(r);
    await until(() => r.facts.some((f) => f.kind === 'turn.ended'), 'the turn ends when the server is idle');
    assert.equal(
      kinds(r).filter((k) => k.startsWith('turn')),
      ['turn.started', 'turn.ended'],
    );
  } finally {
    await r.close();
  }
});

test('queues handed over together go as one prompt, their texts in order, delivery queue; each is delivered on its receipt', async () => {
  const r = await rig();
  try {
    await until(() => r.lane.reaches(S), 'reached');
    assert.ok(r.lane.handsQueue?.take === 'all', 'the core keeps what is queued during a turn (D44)');
    // The core hands a turn's waiting queue over in one step: three calls at once.
    const answers = await Promise.all(
      ['c-q1', 'c-q2', 'c-q3'].map((commandId, i) => r.lane.queue({ session: S, commandId, text: `Q${i + 1}` })),
    );
    assert.ok(answers.every((a) => a.ok));
    assert.equal(
      prompts(r).map((c) => [c.body.delivery, c.body.prompt.text]),
      [['queue', 'Q1\n\nQ2\n\nQ3']],
    );
    const id = prompts(r)[0]!.body.id as string;
    assert.equal(
      answers.map((a) => (a.ok ? a.ref : '')),
      [id, id, id],
    );
    const again = await r.lane.queue({ session: S, commandId: 'c-q2', text: 'Q2' });
    assert.equal(again, answers[1], 'a resend is answered without a second post');
    const later = await r.lane.queue({ session: S, commandId: 'c-q4', text: 'Q4' });
    assert.ok(later.ok && (later.ref ?? '') > id, 'a later one is a prompt of its own, after');
    assert.is(prompts(r).length, 2);
    // Admitted, not yet read: the server takes nothing back (no route; V1 DELETE refuses while busy).
    assert.equal(
      await r.lane.withdraw({ session: S, commandId: 'c-q1' }),
      { removed: false },
      'admitted: the agent has it',
    );
    assert.is(r.standin.calls.filter((c) => c.method === 'DELETE').length, 0, 'nothing deleted on the server');
    r.standin.running.add(S);
    r.standin.emit('session.next.prompted', S, { messageID: id, prompt: { text: 'Q1' } });
    await until(() => r.facts.filter((f) => f.kind === 'delivered').length === 3, 'the receipts');
    assert.equal(
      r.facts.filter((f) => f.kind === 'delivered').map((f) => (f as { commandId: string }).commandId),
      ['c-q1', 'c-q2', 'c-q3'],
    );
    assert.equal(await r.lane.withdraw({ session: S, commandId: 'c-q1' }), { removed: false }, 'delivered: too late');
  } finally {
    await r.close();
  }
});

test('a stop is interrupt, or the V1 abort where it is missing; the turn ends interrupted and nothing is sent', async () => {
  const r = await rig();
  try {
    await until(() => r.lane.reaches(S), 'reached');
    turn(r, 'msg_person3');
    await until(() => r.server.turnOf(S) !== undefined, 'the turn opens');
    r.standin.noInterrupt = true;
    assert.equal(await r.lane.interrupt(S), { ok: true });
    assert.equal(
      r.standin.calls.filter((c) => c.method === 'POST' && !c.path.endsWith('/prompt')).map((c) => c.path),
      [`/api/session/${S}/interrupt`, `/session/${S}/abort`],
    );
    endTurn(r, 'tool-calls');
    await until(() => r.facts.some((f) => f.kind === 'turn.ended'), 'the turn ends');
    const end = r.facts.find((f) => f.kind === 'turn.ended') as Extract<LaneFact, { kind: 'turn.ended' }>;
    assert.is(end.interrupted, true);
    assert.is(prompts(r).length, 0, 'the stop sent nothing');
    assert.equal(await r.lane.interrupt(S), {
      ok: false,
      detail: 'no turn runs in this opencode session; nothing to stop',
    });
  } finally {
    await r.close();
  }
});

test('a start on an idle session is a prompt that opens the turn: delivered started', async () => {
  const r = await rig();
  try {
    await until(() => r.lane.reaches(S), 'reached');
    const o = await r.lane.startTurn({ session: S, commandId: 'c-start', text: 'BEGIN', otherwise: 'queue' });
    assert.ok(o.ok && o.became === undefined);
    turn(r, prompts(r)[0]!.body.id);
    await until(() => r.facts.some((f) => f.kind === 'delivered'), 'the receipt');
    const d = r.facts.find((f) => f.kind === 'delivered') as Extract<LaneFact, { kind: 'delivered' }>;
    assert.equal([d.commandId, d.started], ['c-start', true]);
    const meanwhile = await r.lane.startTurn({ session: S, commandId: 'c-start2', text: 'LATER', otherwise: 'queue' });
    assert.ok(meanwhile.ok && meanwhile.became === 'queue', 'a turn runs: it became a queue');
  } finally {
    await r.close();
  }
});

test('a permission request is a held request, answered on the server; its reply resolves it', async () => {
  const r = await rig();
  try {
    await until(() => r.lane.reaches(S), 'reached');
    r.standin.emit('permission.v2.asked', S, {
      id: 'per_1',
      action: 'bash',
      resources: ['rm -rf build'],
      source: { type: 'tool', messageID: 'msg_a', callID: 'call_1' },
    });
    await until(() => r.facts.some((f) => f.kind === 'approval'), 'the approval');
    const a = r.facts.find((f) => f.kind === 'approval') as Extract<LaneFact, { kind: 'approval' }>;
    assert.is(a.approvalId, 'per_1');
    assert.match(JSON.stringify(a.request), 'rm -rf build');
    assert.equal(await r.lane.answer(S, 'per_1', false, 'not that'), { ok: true });
    const reply = r.standin.calls.find((c) => c.path.endsWith('/permission/per_1/reply'))!;
    assert.equal(reply.body, { reply: 'reject', message: 'not that' });
    r.standin.emit('permission.v2.replied', S, { requestID: 'per_1', reply: 'reject' });
    await until(() => r.facts.some((f) => f.kind === 'approval.resolved'), 'resolved');
    const resolved = r.facts.find((f) => f.kind === 'approval.resolved') as Extract<
      LaneFact,
      { kind: 'approval.resolved' }
    >;
    assert.is(resolved.approved, false);
  } finally {
    await r.close();
  }
});

test("a steer into the TUI's V1 turn, sent before the poll saw it, asks the server, goes through prompt_async, and is delivered when the next step answers it", async () => {
  // The poll is far off: only asking the server at the steer can find the turn.
  const r = await rig({ pollMs: 60_000 });
  try {
    await until(() => r.lane.reaches(S), 'reached');
    await until(() => r.standin.calls.some((c) => c.path === '/event'), 'the V1 stream open');
    r.standin.busy.add(S);
    const o = await r.lane.steer({ session: S, commandId: 'c-v1', text: 'INTO THE TUI' });
    assert.ok(o.ok && o.ref?.startsWith('msg_'), JSON.stringify(o));
    assert.is(r.server.turnOf(S), `${S}#running`);
    assert.ok(
      r.facts.some((f) => f.kind === 'turn.started'),
      'the turn the server said runs is opened',
    );
    assert.is(prompts(r).length, 0, 'no V2 prompt: its receipt never comes in a V1 turn');
    const v1 = r.standin.calls.filter((c) => c.path === `/session/${S}/prompt_async`);
    assert.equal(
      v1.map((c) => c.body),
      [{ messageID: o.ok ? o.ref : '', parts: [{ type: 'text', text: 'INTO THE TUI' }] }],
    );
    // On the V1 stream (the global one closes on the V1 loop's frames): saved as a user message is
    // admitted, not yet in a request; a step answering another message is not it either.
    const ref = o.ok ? (o.ref ?? '') : '';
    r.standin.emitV1('message.updated', S, { info: { id: ref, sessionID: S, role: 'user' } });
    r.standin.emitV1('message.updated', S, {
      info: { id: 'msg_a1', sessionID: S, role: 'assistant', parentID: 'msg_tui' },
    });
    r.standin.emitV1('message.updated', S, { info: { id: 'msg_a2', sessionID: S, role: 'assistant', parentID: ref } });
    await until(() => r.facts.some((f) => f.kind === 'delivered'), 'the receipt');
    // The same step's frame again (saved once more at its end), on the global stream: no second
    // receipt. A frame sent after it shows it was read.
    r.standin.emit('message.updated', S, { info: { id: 'msg_a2', sessionID: S, role: 'assistant', parentID: ref } });
    r.standin.emit('permission.v2.asked', S, { id: 'per_after', action: 'bash', resources: [] });
    await until(() => r.facts.some((f) => f.kind === 'approval'), 'the frame after it');
    const d = r.facts.filter((f) => f.kind === 'delivered') as Extract<LaneFact, { kind: 'delivered' }>[];
    assert.equal(
      d.map((f) => [f.commandId, f.ref]),
      [['c-v1', ref]],
    );
  } finally {
    await r.close();
  }
});

test("a V1 steer the loop takes after its turn's final step began a new turn: the turn ends keeping it, it is delivered started", async () => {
  const r = await rig({ pollMs: 60_000 });
  try {
    await until(() => r.lane.reaches(S), 'reached');
    await until(() => r.standin.calls.some((c) => c.path === '/event'), 'the V1 stream open');
    r.standin.busy.add(S);
    const step = (id: string, parentID: string, finish?: string) =>
      r.standin.emitV1('message.updated', S, {
        info: { id, sessionID: S, role: 'assistant', parentID, ...(finish === undefined ? {} : { finish }) },
      });
    // Into a running turn: the step before asked for tools, so the one naming the steer goes on with it.
    const into = await r.lane.steer({ session: S, commandId: 'c-into', text: 'MID TURN' });
    step('msg_s1', 'msg_tui', 'tool-calls');
    step('msg_s2', into.ok ? (into.ref ?? '') : '');
    await until(() => r.facts.some((f) => f.kind === 'delivered' && f.commandId === 'c-into'), 'the first receipt');
    // Just as the turn ends: its last step finished with the answer, and the loop then takes the steer.
    const late = await r.lane.steer({ session: S, commandId: 'c-late', text: 'AS IT ENDS' });
    step('msg_s2', 'msg_into', 'stop');
    step('msg_s3', late.ok ? (late.ref ?? '') : '');
    await until(() => r.facts.some((f) => f.kind === 'delivered' && f.commandId === 'c-late'), 'the second receipt');
    const d = r.facts.filter((f) => f.kind === 'delivered') as Extract<LaneFact, { kind: 'delivered' }>[];
    assert.equal(
      d.map((f) => [f.commandId, f.started]),
      [
        ['c-into', undefined],
        ['c-late', true],
      ],
    );
    // The turn it was sent into ended first, keeping it (it runs next); the turn it began is named by it.
    const lateRef = late.ok ? late.ref : '';
    const turns = r.facts
      .filter((f) => f.kind === 'turn.started' || f.kind === 'turn.ended' || f.kind === 'delivered')
      .slice(-3)
      .map((f) =>
        f.kind === 'turn.ended'
          ? ['ended', f.kept]
          : f.kind === 'turn.started'
            ? ['started', f.turnId]
            : [f.kind, f.ref],
      );
    assert.equal(turns, [
      ['ended', ['c-late']],
      ['started', lateRef],
      ['delivered', lateRef],
    ]);
    assert.is(r.server.turnOf(S), lateRef);
  } finally {
    await r.close();
  }
});

test('a steer on a session the server says is idle is refused idle, nothing sent', async () => {
  const r = await rig({ pollMs: 60_000 });
  try {
    await until(() => r.lane.reaches(S), 'reached');
    r.standin.busy.add('ses_other');
    const o = await r.lane.steer({ session: S, commandId: 'c-idle2', text: 'x' });
    assert.equal(o.ok ? o : o.reason, 'idle');
    assert.ok(
      r.standin.calls.some((c) => c.path === '/session/status'),
      'the server was asked',
    );
    assert.is(r.standin.calls.filter((c) => c.method === 'POST').length, 0);
  } finally {
    await r.close();
  }
});

test('a wrong password is said once, naming the file; a lost server is said once and is one lost fact', async () => {
  const bad = await rig({ password: 'other', file: passwordFile });
  try {
    await until(() => bad.errors.length > 0, 'the refusal');
    await new Promise((res) => setTimeout(res, 300));
    assert.is(bad.errors.length, 1, bad.errors.map((e) => e.message).join(' | '));
    assert.equal([bad.errors[0]!.code, bad.errors[0]!.message.includes(passwordFile)], ['SOURCE_UNAUTHORIZED', true]);
    assert.not.ok(bad.lane.reaches(S));
  } finally {
    await bad.close();
  }
  const r = await rig({ password: 'sekret', file: passwordFile });
  try {
    await until(() => r.lane.reaches(S), 'the right password reaches it');
    await r.standin.close();
    await until(() => r.facts.some((f) => f.kind === 'lost'), 'lost');
    await new Promise((res) => setTimeout(res, 300));
    assert.is(r.errors.length, 1, r.errors.map((e) => e.message).join(' | '));
    assert.is(kinds(r).filter((k) => k === 'lost').length, 1);
    const q = await r.lane.queue({ session: S, commandId: 'c-down', text: 'DOWN' });
    assert.equal(q.ok ? q : q.reason, 'unreachable');
  } finally {
    await r.lane.close();
    await r.server.close();
  }
});

test.run();
