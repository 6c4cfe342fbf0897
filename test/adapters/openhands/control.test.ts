// The OpenHands control gate (AEP_OPENHANDS_CONTROL=1, D29) end to end: commands sent through a
// real relay to `aep-steer adapter openhands`, carried out on the stand-in agent server's REST
// API, and seen on the stream. send_input reaches the model's next request while a run goes on;
// on an idle conversation it is appended and nothing runs; a confirmation answered with
// `aep-steer respond` accepts or rejects the pending action; the status guards refuse what the
// server would ignore; every command gets one decision, and a redelivery its recorded ack.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { auditFiles } from '../../../src/audit/audit.js';
import { acceptsOf } from '../../../src/consumer/roster.js';
import { RESPOND_EXIT, runRespond } from '../../../src/cli/respond-command.js';
import { command } from '../../../src/protocol/build.js';
import type { AepEvent } from '../../../src/protocol/index.js';
import { RelayConsumer } from '../../../src/consumer/connection.js';
import { sendInput as consumerSendInput } from '../../../src/consumer/send-input.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DOCTOR_EXIT, runDoctor } from '../../../src/cli/doctor-command.js';
import { sink } from '../../cli/support.js';
import { startOpenHandsStack, type OpenHandsStack } from '../../support/openhands-stack.js';

const TASK = '[[TURN]] [[TOOLS:2]] list the files, then summarise';
const STEER = 'STEER-CANARY: also count the markdown files';

async function attached(
  stack: OpenHandsStack,
  opts: Parameters<OpenHandsStack['server']['create']>[0] = {},
): Promise<string> {
  const id = stack.server.create({ message: TASK, ...opts });
  await stack.waitFor((e) => e.session === id && e.type === 'state.snapshot');
  return id;
}

async function withStack(fn: (stack: OpenHandsStack, consumer: RelayConsumer) => Promise<void>): Promise<void> {
  const stack = await startOpenHandsStack({ control: true });
  const consumer = await RelayConsumer.connect({ url: stack.relay.socketUrl, token: stack.token, agent: 'alice' });
  try {
    await fn(stack, consumer);
    assert.equal(stack.errors, []);
    // The run's stream passes aep-steer audit: the bridge's log, and what the relay fanned out.
    const exportPath = join(stack.dir, 'relay-export.jsonl');
    const once = new Set<string>();
    const exported = stack.seen.filter((e) => {
      if (once.has(`${e.source} ${e.id}`)) return false;
      once.add(`${e.source} ${e.id}`);
      return true;
    });
    writeFileSync(exportPath, `${exported.map((e) => JSON.stringify(e)).join('\n')}\n`);
    for (const files of [[stack.logPath], [exportPath], [stack.logPath, exportPath]]) {
      assert.equal((await auditFiles(files)).violations, [], files.join(' + '));
    }
  } finally {
    await consumer.close();
    await stack.stop();
  }
}

const cmd = (
  session: string,
  type: string,
  data: Record<string, unknown> = {},
  extra: { subject?: string; capture?: 'redacted' } = {},
) => command({ agent: 'alice' }, session, { type, data, ...extra });

const sendInput = (session: string, text: string) =>
  cmd(session, 'x.openhands.control.send_input', { text }, { capture: 'redacted' });

async function until(pred: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200; i += 1) {
    if (pred()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const restWrites = (stack: OpenHandsStack) =>
  stack.server.requests.filter((r) => r.transport === 'http' && r.method === 'POST');

test('gate on: hello declares the five writes', async () => {
  await withStack(async (stack, consumer) => {
    const id = await attached(stack);
    const entry = (await consumer.roster()).find((r) => r.session === id)!;
    assert.equal(acceptsOf(entry)?.sort(), [
      'control.attention.respond',
      'control.pause',
      'control.resume',
      'x.openhands.control.interrupt',
      'x.openhands.control.send_input',
    ]);
  });
});

test('send_input during a running conversation reaches the next model request; x.openhands.input.sent {} never echoes it', async () => {
  await withStack(async (stack, consumer) => {
    const id = await attached(stack);
    const held = stack.model.hold();
    stack.server.run(id);
    await held.arrived;
    const before = stack.model.modelRequests().length;
    const c = sendInput(id, STEER);
    const settled = await consumer.send(c);
    assert.is(settled.outcome, 'accepted');
    const sent = await stack.waitFor((e) => e.cause === c.id && e.type === 'x.openhands.input.sent');
    assert.equal(sent.data, {});
    held.release();
    await stack.server.until(id, 'finished');
    const requests = stack.model.modelRequests();
    assert.not.ok(requests[before - 1]!.text.includes('STEER-CANARY'), 'the held request was built before the append');
    assert.ok(requests[before]!.text.includes('STEER-CANARY'), 'the next model request carries it');
    const appends = restWrites(stack).filter((r) => r.path === `/api/conversations/${id}/events`);
    assert.equal(
      appends.map((r) => r.body),
      [{ role: 'user', content: [{ type: 'text', text: STEER }], run: false }],
    );
    // Metadata posture downstream: the text never rides an event the bridge emits.
    assert.not.ok(
      JSON.stringify(stack.session(id).filter((e) => e.type !== 'x.openhands.control.send_input')).includes(
        'STEER-CANARY',
      ),
    );
    // The appended message comes back on the socket as the user's MessageEvent.
    const appended = stack.server
      .conversation(id)!
      .events.find((e) => e.kind === 'MessageEvent' && JSON.stringify(e.llm_message).includes('STEER-CANARY'))!;
    const seen = await stack.waitFor((e) => e.data?.vendor_event_id === appended.id);
    assert.equal([seen.type, seen.data?.role], ['x.openhands.message.event', 'user']);
  });
});

test('send_input on an idle conversation is appended and nothing runs (sent through the consumer core)', async () => {
  await withStack(async (stack, consumer) => {
    const id = await attached(stack);
    const o = await consumerSendInput(consumer, { sender: 'alice' }, { session: id, text: STEER, timeoutMs: 10_000 });
    assert.is(o.outcome, 'delivered', JSON.stringify(o));
    const sent = await stack.waitFor((e) => e.session === id && e.type === 'x.openhands.input.sent');
    assert.is(sent.cause, o.outcome === 'delivered' ? o.command : '');
    await stack.waitFor(
      (e) =>
        e.session === id &&
        e.type === 'x.openhands.message.event' &&
        e.data?.role === 'user' &&
        e.data?.vendor_event_id === stack.server.conversation(id)!.events.at(-1)!.id,
    );
    await new Promise((r) => setTimeout(r, 150));
    assert.is(stack.server.conversation(id)!.status, 'idle');
    assert.is(stack.model.modelRequests().length, 0, 'no model call: run:false');
    assert.not.ok(stack.session(id).some((e) => e.type === 'run.started'));
  });
});

test("a confirmation answered through aep-steer respond: allow runs the pending action, deny rejects it with the operator's words", async () => {
  await withStack(async (stack) => {
    const flags = { relay: stack.relay.socketUrl, token: stack.token, sender: 'alice', timeout: '10000' };
    for (const [word, wantTool] of [
      ['allow', 'tool.completed'],
      ['not on this machine', 'x.openhands.user_reject.observation'],
    ] as const) {
      const id = await attached(stack, { confirmation: true, message: '[[TURN]] [[TOOLS:1]] run it' });
      stack.server.run(id);
      const att = await stack.waitFor((e) => e.session === id && e.type === 'attention.requested');
      assert.equal(att.data, {
        kind: 'permission',
        prompt: 'Awaiting confirmation for a pending action',
        options: [
          { id: 'allow', label: 'allow' },
          { id: 'deny', label: 'deny' },
        ],
        respond_via: ['control'],
      });
      const out = sink();
      const code = await runRespond(
        word,
        { ...flags, session: id, request: att.id },
        { out: out.stream, err: sink().stream },
      );
      assert.is(code, RESPOND_EXIT.answered, out.text());
      const answered = await stack.waitFor((e) => e.session === id && e.type === 'attention.answered');
      const resolved = await stack.waitFor((e) => e.session === id && e.type === 'attention.resolved');
      assert.is(answered.subject, att.id);
      assert.is(resolved.subject, att.id);
      assert.is(resolved.cause, answered.id);
      assert.equal(resolved.data, { resolution: 'answered' });
      const ack = await stack.waitFor((e) => e.session === id && e.type === 'control.accepted');
      assert.is(answered.cause, ack.cause, 'the answer names the respond command');
      await stack.waitFor((e) => e.session === id && e.type === wantTool);
      const respond = restWrites(stack).filter(
        (r) => r.path === `/api/conversations/${id}/events/respond_to_confirmation`,
      );
      if (word === 'allow') {
        assert.equal(
          respond.map((r) => r.body),
          [{ accept: true }],
        );
        assert.equal(answered.data, { answer: { option: 'allow' }, via: 'control' });
        await stack.server.until(id, 'finished');
      } else {
        assert.equal(
          respond.map((r) => r.body),
          [{ accept: false, reason: word }],
        );
        assert.equal(answered.data, { answer: { option: 'deny', text: word }, via: 'control' });
        assert.is(answered.capture, 'redacted');
        const rejected = stack.server.conversation(id)!.events.find((e) => e.kind === 'UserRejectObservation')!;
        assert.is(rejected.rejection_reason, word);
        assert.not.ok(
          stack.server.conversation(id)!.events.some((e) => e.kind === 'ObservationEvent'),
          'the action never ran',
        );
        await stack.server.until(id, 'idle');
      }
    }
  });
});

test('D34: a confirmation answered at the server, or by an earlier respond, is refused not-pending; nothing is sent', async () => {
  await withStack(async (stack) => {
    const flags = { relay: stack.relay.socketUrl, token: stack.token, sender: 'alice', timeout: '10000' };
    const respond = async (id: string, request: string) => {
      const out = sink();
      const err = sink();
      const code = await runRespond('allow', { ...flags, session: id, request }, { out: out.stream, err: err.stream });
      return { code, text: out.text() + err.text() };
    };
    const confirmations = (id: string) =>
      restWrites(stack).filter((r) => r.path === `/api/conversations/${id}/events/respond_to_confirmation`).length;

    // Another client of the agent server lets it proceed: the request ends at the agent.
    const oob = await attached(stack, { confirmation: true, message: '[[TURN]] [[TOOLS:1]] run it' });
    stack.server.run(oob);
    const first = await stack.waitFor((e) => e.session === oob && e.type === 'attention.requested');
    stack.server.run(oob);
    await stack.waitFor((e) => e.session === oob && e.type === 'attention.resolved' && e.subject === first.id);
    const late = await respond(oob, first.id);
    assert.is(late.code, RESPOND_EXIT.notPending, late.text);
    assert.match(late.text, 'already answered at the agent');
    assert.is(confirmations(oob), 0, 'nothing was sent to the server');
    assert.not.ok(
      stack
        .session(oob)
        .some((e) => e.type === 'attention.answered' && e.subject === first.id && e.data?.via === 'control'),
    );
    await stack.server.until(oob, 'finished');

    // Answered through respond once: a second respond is told so, and the server hears one answer.
    const twice = await attached(stack, { confirmation: true, message: '[[TURN]] [[TOOLS:1]] run it' });
    stack.server.run(twice);
    const req = await stack.waitFor((e) => e.session === twice && e.type === 'attention.requested');
    assert.is((await respond(twice, req.id)).code, RESPOND_EXIT.answered);
    await stack.waitFor((e) => e.session === twice && e.type === 'attention.resolved' && e.subject === req.id);
    const again = await respond(twice, req.id);
    assert.is(again.code, RESPOND_EXIT.notPending, again.text);
    assert.match(again.text, 'already answered by an earlier respond');
    assert.is(confirmations(twice), 1);

    // An id the bridge never saw stays unknown-request.
    const never = await respond(twice, 'att_never_seen');
    assert.is(never.code, RESPOND_EXIT.rejected, never.text);
  });
});

test('an append the server refuses (404) drops the input send-failed: one outcome, settled for the consumer', async () => {
  await withStack(async (stack, consumer) => {
    const id = await attached(stack);
    stack.server.forget(id);
    const o = await consumerSendInput(consumer, { sender: 'alice' }, { session: id, text: STEER, timeoutMs: 10_000 });
    assert.equal(
      [o.outcome, o.outcome === 'dropped' ? o.reason : undefined],
      ['dropped', 'send-failed'],
      JSON.stringify(o),
    );
    assert.not.ok(stack.session(id).some((e) => e.type === 'x.openhands.input.sent'));
    assert.is(restWrites(stack).filter((r) => r.status === 404).length, 1);
  });
});

test('guards from the last status: pause and interrupt only while running, resume only from paused, respond only to the live request', async () => {
  await withStack(async (stack, consumer) => {
    const id = await attached(stack, { confirmation: true, message: '[[TURN]] [[TOOLS:1]] run it' });
    const rejected = async (c: AepEvent) => {
      const s = await consumer.send(c as Parameters<RelayConsumer['send']>[0]);
      assert.is(s.outcome, 'rejected', c.type);
      return s.outcome === 'rejected' ? s : undefined;
    };
    assert.match(
      (await rejected(cmd(id, 'control.pause')))!.detail ?? '',
      /only while the conversation runs; it is idle/,
    );
    assert.match((await rejected(cmd(id, 'control.resume')))!.detail ?? '', /only from paused/);
    stack.server.run(id);
    const att = await stack.waitFor((e) => e.session === id && e.type === 'attention.requested');
    assert.match(
      (await rejected(cmd(id, 'control.resume')))!.detail ?? '',
      /answer it with control\.attention\.respond/,
    );
    assert.match(
      (await rejected(cmd(id, 'x.openhands.control.interrupt')))!.detail ?? '',
      /only while the conversation runs/,
    );
    assert.match(
      (await rejected(
        cmd(id, 'control.attention.respond', { answer: { option: 'allow' } }, { subject: 'att_not_live' }),
      ))!.detail ?? '',
      /not the live pending/,
    );
    assert.is(
      (await rejected(cmd(id, 'control.attention.respond', { answer: { option: 'maybe' } }, { subject: att.id })))!
        .reason,
      'invalid',
    );
    // Nothing reached the server: every refusal was taken before a write.
    assert.equal(restWrites(stack), []);
  });
});

test('pause, resume and interrupt while running: the status flip on the stream names the command', async () => {
  await withStack(async (stack, consumer) => {
    const id = await attached(stack, { message: '[[TURN]] [[TOOLS:3]] go' });
    let held = stack.model.hold();
    stack.server.run(id);
    await held.arrived;
    // The guard reads what the bridge last saw: wait until the stream shows the run.
    await stack.waitFor((e) => e.session === id && e.type === 'run.started');
    const pause = cmd(id, 'control.pause');
    const pausing = consumer.send(pause);
    // The model stays held until the pause reached the server, so the run is still going then.
    while (!restWrites(stack).some((r) => r.path.endsWith('/pause'))) await new Promise((r) => setTimeout(r, 10));
    held.release();
    const paused0 = await pausing;
    assert.is(paused0.outcome, 'accepted', JSON.stringify(paused0));
    const paused = await stack.waitFor((e) => e.session === id && e.type === 'state.delta' && e.cause === pause.id);
    assert.is(stack.server.conversation(id)!.status, 'paused');
    assert.ok(stack.session(id).some((e) => e.type === 'x.openhands.pause.event'));
    assert.not.ok(
      stack.session(id).some((e) => e.type === 'run.finished'),
      'paused never closes the run',
    );
    held = stack.model.hold();
    const resume = cmd(id, 'control.resume');
    assert.is((await consumer.send(resume)).outcome, 'accepted');
    const resumed = await stack.waitFor((e) => e.session === id && e.type === 'state.delta' && e.cause === resume.id);
    assert.ok(resumed.seq! > paused.seq!);
    await held.arrived;
    const interrupt = cmd(id, 'x.openhands.control.interrupt');
    assert.is((await consumer.send(interrupt)).outcome, 'accepted');
    await stack.waitFor((e) => e.session === id && e.type === 'state.delta' && e.cause === interrupt.id);
    assert.ok(stack.session(id).some((e) => e.type === 'x.openhands.interrupt.event'));
    held.release();
    const posts = restWrites(stack).map((r) => r.path.replace(`/api/conversations/${id}`, ''));
    assert.equal(posts, ['/pause', '/run', '/interrupt']);
    const runs = new Set(
      stack
        .session(id)
        .filter((e) => e.type === 'run.started')
        .map((e) => e.run),
    );
    assert.is(runs.size, 1, 'a resumed run is the same run');
  });
});

test('one decision per command: a redelivered command gets the recorded ack byte for byte, and nothing is written twice', async () => {
  await withStack(async (stack, consumer) => {
    const id = await attached(stack);
    const c = sendInput(id, 'once only');
    const first = await consumer.send(c);
    const again = await consumer.send(c);
    assert.ok(first.outcome === 'accepted' && again.outcome === 'accepted');
    assert.is(JSON.stringify(again.ack), JSON.stringify(first.ack));
    const refused = cmd(id, 'control.pause');
    const r1 = await consumer.send(refused);
    const r2 = await consumer.send(refused);
    assert.ok(r1.outcome === 'rejected' && r2.outcome === 'rejected');
    assert.is(JSON.stringify(r2.ack), JSON.stringify(r1.ack));
    await stack.waitFor((e) => e.cause === c.id && e.type === 'x.openhands.input.sent');
    assert.is(restWrites(stack).length, 1);
    assert.is(stack.session(id).filter((e) => e.type === 'x.openhands.input.sent').length, 1);
  });
});

test('gate off: every control verb is refused gate-off, nothing is written', async () => {
  const stack = await startOpenHandsStack();
  const consumer = await RelayConsumer.connect({ url: stack.relay.socketUrl, token: stack.token, agent: 'alice' });
  try {
    const id = await attached(stack);
    const bridgeSaw: AepEvent[] = [];
    stack.bridge.adapter.events$.subscribe((e) => bridgeSaw.push(e));
    for (const type of ['x.openhands.control.send_input', 'control.pause', 'control.attention.respond']) {
      const c = type.endsWith('send_input')
        ? sendInput(id, 'x')
        : cmd(id, type, {}, type.endsWith('respond') ? { subject: 'att_1' } : {});
      // The relay refuses what the hello does not declare, before the bridge sees it.
      const s = await consumer.send(c);
      assert.equal([s.outcome, s.outcome === 'refused' ? s.code : undefined], ['refused', 'unsupported'], type);
      // And the bridge itself, handed the command directly, refuses it gate-off.
      stack.bridge.adapter.command(c);
      await until(() => bridgeSaw.some((e) => e.cause === c.id), `the bridge's ack of ${type}`);
      const ack = bridgeSaw.find((e) => e.cause === c.id)!;
      assert.equal([ack.type, ack.data?.reason], ['control.rejected', 'unsupported'], type);
    }
    assert.equal(restWrites(stack), []);
  } finally {
    await consumer.close();
    await stack.stop();
  }
});

test('aep-steer doctor openhands: no hooks to check; the steering gate is AEP_OPENHANDS_CONTROL, named with its fix', async () => {
  for (const control of [true, false]) {
    const stack = await startOpenHandsStack({ control });
    try {
      const out = sink();
      const code = await runDoctor(
        'openhands',
        { relay: stack.relay.socketUrl, token: stack.token, port: String(stack.bridge.adapter.port), json: true },
        {
          out: out.stream,
          err: sink().stream,
          env: { ...process.env, AEP_STATE_DIR: join(stack.dir, 'state'), AEP_HOOK_PORT: '' },
        },
      );
      const checks = (
        JSON.parse(out.text()) as { checks: { name: string; ok: boolean; detail: string; fix?: string }[] }
      ).checks;
      const gate = checks.find((c) => c.name === 'steering gate')!;
      assert.is(gate.ok, control, gate.detail);
      if (!control)
        assert.is(gate.fix, 'restart it: aep-steer down openhands && AEP_OPENHANDS_CONTROL=1 aep-steer up openhands');
      assert.match(
        checks.find((c) => c.name === 'hooks')!.detail,
        /observed over its own server \(AEP_OPENHANDS_URL\)/,
      );
      assert.is(checks.find((c) => c.name === 'adapter')!.ok, true);
      assert.is(code === DOCTOR_EXIT.ok, control);
    } finally {
      await stack.stop();
    }
  }
});

test.run();
