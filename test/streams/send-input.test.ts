// send_input (D28, D29) through the real adapter runtime: hook endpoint, session actor, fsynced
// log, and a channel at the edge that answers as the vendor's would. The log it leaves passes
// the audit, and a restart replays it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Subject } from 'rxjs';
import { adapter } from '../support/adapter.js';
import { fakeSurface, hookBody } from '../support/fake-surface.js';
import { command, type AepEvent } from '../../src/protocol/index.js';
import { auditFiles } from '../../src/audit/audit.js';
import { acceptsFor } from '../../src/streams/run.js';
import type { InputPolicy, VendorSurface } from '../../src/streams/surface.js';
import type { Lane, LaneFact, LaneOutcome, LaneRequest } from '../../src/streams/lane.js';

const S = 's-1';
const TYPE = 'x.claude-code.control.send_input';
const HUB: InputPolicy = {
  deliveries: ['queue', 'steer'],
  defaultDelivery: 'queue',
  refuseIdle: true,
  reportsConsumption: true,
  mergesIdentical: true,
};

/** UserPromptSubmit opens a turn and Stop closes it, as a vendor table would mark them. */
function surface(policy: InputPolicy = HUB): VendorSurface {
  const base = fakeSurface();
  return {
    ...base,
    sendInput: { type: TYPE, policy },
    classify(input) {
      const h = base.classify(input);
      if (h.class.kind !== 'moment') return h;
      const turn = h.event === 'UserPromptSubmit' ? 'opens' : h.event === 'Stop' ? 'closes' : undefined;
      return turn === undefined ? h : { ...h, class: { ...h.class, turn } };
    },
  };
}

/** The vendor's user-plane channel as a lane, answering as the vendor's would. */
class FakeChannel implements Lane {
  readonly name = 'channel';
  readonly deliveries = [];
  readonly how = 'connect the channel';
  up = true;
  outcome: LaneOutcome = { ok: true };
  readonly sent: (LaneRequest & { delivery?: string })[] = [];
  readonly facts = new Subject<LaneFact>();
  readonly facts$ = this.facts.asObservable();
  reaches(): boolean {
    return this.up;
  }
  ready(): boolean {
    return this.up;
  }
  async send(req: LaneRequest & { delivery?: string }): Promise<LaneOutcome> {
    this.sent.push(req);
    return this.outcome;
  }
  async close(): Promise<void> {}
}

const sendCmd = (id: string, text: string, delivery?: string) =>
  command({ agent: 'tester', host: 'test-host' }, S, {
    type: TYPE,
    id,
    data: delivery === undefined ? { text } : { text, delivery },
    capture: 'redacted',
  });

const caused = (events: AepEvent[], id: string) => events.filter((e) => e.cause === id).map((e) => e.type);

test('send_input: accepted, sent through the transport, consumed, dropped at the end; every outcome cause-linked; the log passes the audit', async () => {
  const transport = new FakeChannel();
  const a = await adapter({ surface: surface(), lanes: [transport], sendInput: true });
  try {
    await a.post(hookBody('SessionStart', S));
    const idle = a.next((e) => e.type === 'control.rejected');
    a.handle.command(sendCmd('c0', 'too early'));
    assert.equal((await idle).data, {
      reason: 'refused',
      detail: 'session idle: send_input would start a turn; send it while the agent is working',
    });
    await a.post(hookBody('UserPromptSubmit', S));
    const sentEv = a.next((e) => e.type === 'x.claude-code.input.sent' && e.cause === 'c1');
    a.handle.command(sendCmd('c1', 'check the flaky test', 'steer'));
    assert.equal((await sentEv).data, { delivery: 'steer' });
    assert.equal(transport.sent, [{ session: S, commandId: 'c1', text: 'check the flaky test', delivery: 'steer' }]);
    const consumed = a.next((e) => e.type === 'x.claude-code.input.consumed');
    transport.facts.next({ kind: 'consumed', session: S, at: Date.now(), text: 'check the flaky test' });
    assert.is((await consumed).cause, 'c1');
    const sent2 = a.next((e) => e.type === 'x.claude-code.input.sent' && e.cause === 'c2');
    a.handle.command(sendCmd('c2', 'then run lint'));
    assert.equal((await sent2).data, { delivery: 'queue' });
    const ended = a.next((e) => e.type === 'session.ended');
    await a.post(hookBody('SessionEnd', S));
    await ended;
    assert.equal(caused(a.events, 'c1'), [
      'control.accepted',
      'x.claude-code.input.sent',
      'x.claude-code.input.consumed',
    ]);
    assert.equal(caused(a.events, 'c2'), [
      'control.accepted',
      'x.claude-code.input.sent',
      'x.claude-code.instruction.dropped',
    ]);
    assert.equal(a.events.find((e) => e.cause === 'c2' && e.type.endsWith('dropped'))!.data, {
      reason: 'session-ended',
    });
    assert.not.ok(
      JSON.stringify(a.events.filter((e) => e.type.includes('input.'))).includes('flaky'),
      'outcomes never echo the text',
    );
  } finally {
    await a.handle.close();
  }
  const r = await auditFiles([a.logPath]);
  assert.equal(r.violations, []);
  assert.equal(
    r.instructions.map((i) => [i.id, i.status]),
    [
      ['c0', 'rejected'],
      ['c1', 'delivered'],
      ['c2', 'dropped'],
    ],
  );
});

test('send_input: transport refusal drops send-failed; transport down is busy; gate off is unsupported and absent from hello', async () => {
  const transport = new FakeChannel();
  const a = await adapter({ surface: surface(), lanes: [transport], sendInput: true });
  try {
    await a.post(hookBody('UserPromptSubmit', S));
    transport.outcome = { ok: false, reason: 'refused', detail: 'session_not_found' };
    const dropped = a.next((e) => e.type === 'x.claude-code.instruction.dropped');
    a.handle.command(sendCmd('c1', 'one'));
    assert.equal((await dropped).data, { reason: 'send-failed' });
    transport.up = false;
    const busy = a.next((e) => e.type === 'control.rejected' && e.cause === 'c2');
    a.handle.command(sendCmd('c2', 'two'));
    assert.is((await busy).data!.reason, 'busy');
    assert.is(transport.sent.length, 1);
  } finally {
    await a.handle.close();
  }
  const off = await adapter({ surface: surface(), lanes: [new FakeChannel()] });
  try {
    await off.post(hookBody('UserPromptSubmit', S));
    const rejected = off.next((e) => e.type === 'control.rejected');
    off.handle.command(sendCmd('c3', 'three'));
    assert.is((await rejected).data!.reason, 'unsupported');
  } finally {
    await off.handle.close();
  }
  assert.equal(acceptsFor(surface(), false, true), ['control.attention.respond', TYPE]);
  assert.equal(acceptsFor(surface(), true, false), ['control.attention.respond', 'x.claude-code.control.instruct']);
});

test('send_input D4/D11: a retry after restart gets the byte-identical ack; an input with no transport answer is reported delivery-unknown, never re-sent', async () => {
  const transport = new FakeChannel();
  let release!: (o: LaneOutcome) => void;
  transport.send = async (req) => {
    transport.sent.push(req);
    return new Promise<LaneOutcome>((r) => {
      release = r;
    });
  };
  const a = await adapter({ surface: surface(), lanes: [transport], sendInput: true });
  let ack: AepEvent;
  try {
    await a.post(hookBody('UserPromptSubmit', S));
    const accepted = a.next((e) => e.type === 'control.accepted');
    a.handle.command(sendCmd('c1', 'pending forever'));
    ack = await accepted;
  } finally {
    await a.handle.close();
  }
  release({ ok: true });
  const again = new FakeChannel();
  const b = await adapter({ surface: surface(), lanes: [again], sendInput: true, logPath: a.logPath });
  try {
    // Recovery runs as the adapter starts, before this test could subscribe: read the log.
    const logged = (await import('node:fs')).readFileSync(a.logPath, 'utf8');
    assert.match(logged, /"type":"x\.claude-code\.instruction\.dropped"[^\n]*"reason":"delivery-unknown"/);
    const reack = b.next((e) => e.type === 'control.accepted');
    b.handle.command(sendCmd('c1', 'pending forever'));
    assert.is(JSON.stringify(await reack), JSON.stringify(ack));
    assert.is(again.sent.length, 0);
  } finally {
    await b.handle.close();
  }
});

test.run();
