// Codex 0.171.0 end to end: the real CLI runs headless against the loopback mock Responses API;
// this project's relay and adapter run in-process; hooks.json is written by the real installer and
// every hook runs the real shim; instructions go through the relay as a consumer sends them. The
// mock holds a chosen model request so each instruction is queued before the moment that must take
// it: every sequence is deterministic without sleeping.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { auditFiles } from '../../src/audit/audit.js';
import { checkStream, type AepEvent } from '../../src/protocol/index.js';
import { e2eSuite } from '../support/e2e-stack.js';
import { bodyHas, type VendorStack } from '../support/vendor-e2e.js';

const e2e = e2eSuite('codex');
/** The same adapter with a short resume window, to see the window pass (D25). */
let windowed: VendorStack;
const WINDOW_MS = 1500;
const INSTRUCT = 'x.codex.control.instruct';

/** A run in a workspace of its own whose first model request of the turn carrying `tag` is held. */
async function startHeld(prompt: string, tag: string, to: VendorStack = e2e.stack) {
  const ws = await e2e.workspace({ to });
  return { ws, ...(await e2e.startHeld(ws, prompt, (r) => e2e.turnOf(r).includes(tag), { to })) };
}

const ofSession = (session: string) => e2e.stack.events.filter((e) => e.session === session);
const seqOf = (e: AepEvent | undefined): number => {
  assert.ok(e, 'event present');
  return e!.seq!;
};
const pad = (marker: string, n: number) => `${marker} ${'x'.repeat(n - marker.length - 1)}`;

/**
 * A loopback hop between the shim and the adapter. It forwards every hook at once; for the one
 * hook `hold` picks it answers the shim only on `release()`, after the adapter has taken it. That
 * pins what the test does between two hooks of the real CLI without sleeping.
 */
interface HookHop {
  port: number;
  /** Every hook that passed, with the adapter's reply text. */
  passed: { body: Record<string, unknown>; reply: string }[];
  hold(pick: (body: Record<string, unknown>) => boolean): { arrived: Promise<void>; release: () => void };
  close(): Promise<void>;
}

async function startHookHop(target: number): Promise<HookHop> {
  let pending:
    | { pick: (body: Record<string, unknown>) => boolean; arrived: () => void; released: Promise<void> }
    | undefined;
  const passed: { body: Record<string, unknown>; reply: string }[] = [];
  async function forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    const upstream = await fetch(`http://127.0.0.1:${target}${req.url ?? '/'}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: text,
    });
    const reply = await upstream.text();
    let body: Record<string, unknown> = {};
    try {
      body = JSON.parse(text) as Record<string, unknown>;
    } catch {
      // Not JSON: forwarded as is, never held.
    }
    passed.push({ body, reply });
    const p = pending;
    if (p?.pick(body)) {
      pending = undefined;
      p.arrived();
      await p.released;
    }
    res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' });
    res.end(reply);
  }
  const server = createServer((req, res) => {
    forward(req, res).catch(() => {
      res.writeHead(502);
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    port: (server.address() as AddressInfo).port,
    passed,
    hold(pick) {
      let arrived!: () => void;
      let release!: () => void;
      const arrivedP = new Promise<void>((r) => {
        arrived = r;
      });
      const released = new Promise<void>((r) => {
        release = r;
      });
      pending = { pick, arrived, released };
      return { arrived: arrivedP, release };
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

if (e2e.installed) {
  test.before(async () => {
    windowed = await e2e.adapter({ AEP_RESUME_WINDOW_MS: String(WINDOW_MS) });
  });

  test('PreToolUse delivers a queued instruction to the request carrying the tool result', async () => {
    const { session, release, run } = await startHeld('[[TURN]] pre-tool run one command', 'pre-tool');
    const text = `STEER-CODEX-PRE-${session.slice(-8)} <keep> "as is"`;
    const cmd = await e2e.stack.accepted(session, INSTRUCT, { text });
    release();
    const result = await run;
    assert.is(result.code, 0, result.stderr.slice(-2000));
    const d = await e2e.stack.delivered(session, cmd);
    const ack = e2e.stack.find(session, 'control.accepted', cmd.id);
    assert.ok(seqOf(ack) < seqOf(d), 'control.accepted comes before delivered');
    assert.type((d.data as { queued_ms?: unknown }).queued_ms, 'number');
    // Taken at PreToolUse: after the tool was requested, before it completed.
    assert.ok(seqOf(e2e.stack.find(session, 'tool.requested')) < seqOf(d));
    assert.ok(seqOf(d) < seqOf(e2e.stack.find(session, 'tool.completed')));
    const reqs = e2e.requestsOf('pre-tool');
    assert.not.ok(bodyHas(reqs[0]!.body, text), 'not in the held request');
    assert.ok(bodyHas(reqs[1]!.body, text), 'verbatim in the next request: Codex keeps <tags> and quotes (§2.8)');
    const items = (reqs[1]!.body as { input: { type: string; role?: string; content?: { text?: string }[] }[] }).input;
    const at = items.findIndex((i) => i.role === 'developer' && (i.content ?? []).some((c) => c.text === text));
    assert.ok(at > items.findIndex((i) => i.type === 'function_call'), 'a developer item after the function call');
    assert.is(ofSession(session).filter((e) => e.type === 'x.codex.instruction.delivered').length, 1);
  });

  test('PostToolUse takes what PreToolUse could not fit, and neither instruction is split', async () => {
    const { session, release, run } = await startHeld('[[TURN]] post-tool run one command', 'post-tool');
    // Three of 4,000 (D2's cap) join past 10,000 (D8): two fit the first moment, the third waits, whole.
    const [a, b, c] = ['A', 'B', 'C'].map((k) => pad(`STEER-CODEX-${k}-${session.slice(-8)}`, 4000)) as [
      string,
      string,
      string,
    ];
    const ca = await e2e.stack.accepted(session, INSTRUCT, { text: a });
    const cb = await e2e.stack.accepted(session, INSTRUCT, { text: b });
    const cc = await e2e.stack.accepted(session, INSTRUCT, { text: c });
    release();
    assert.is((await run).code, 0);
    const [da, db, dc] = [
      await e2e.stack.delivered(session, ca),
      await e2e.stack.delivered(session, cb),
      await e2e.stack.delivered(session, cc),
    ];
    const completed = seqOf(e2e.stack.find(session, 'tool.completed'));
    assert.ok(seqOf(da) < completed && seqOf(db) < completed, 'the first two at PreToolUse');
    assert.ok(seqOf(dc) > completed, 'the third at PostToolUse');
    const next = e2e.requestsOf('post-tool')[1]!;
    assert.ok(
      [a, b, c].every((t) => bodyHas(next.body, t)),
      'all three arrive whole in the request carrying the tool result',
    );
    assert.ok(bodyHas(next.body, `${a}\n\n${b}`), 'the first two joined by a blank line, in FIFO order');
  });

  test('an instruction still queued at SessionEnd waits out the resume window, then drops before any later start', async () => {
    const { session, release, run } = await startHeld('[[TURN]] [[TOOLS:0]] answer-only', 'answer-only', windowed);
    const text = `STEER-CODEX-LATE-${session.slice(-8)}`;
    const cmd = await windowed.accepted(session, INSTRUCT, { text });
    release();
    assert.is((await run).code, 0);
    const mine = () => windowed.events.filter((e) => e.session === session);
    const ended = await windowed.waitFor('session.ended', () => windowed.find(session, 'session.ended'));
    assert.not.ok(
      windowed.find(session, 'x.codex.instruction.dropped', cmd.id),
      'kept through SessionEnd: a resumed run may still take it',
    );
    const dropped = await windowed.waitFor(
      'dropped when the window passes',
      () => windowed.find(session, 'x.codex.instruction.dropped', cmd.id),
      20_000,
    );
    assert.equal(dropped.data, { reason: 'session-ended' });
    assert.ok(
      seqOf(dropped) > seqOf(ended),
      `dropped after session.ended, once the window passed: ${mine()
        .map((e) => `${e.seq}:${e.type}`)
        .join(', ')}`,
    );
    assert.ok(Date.parse(dropped.time) - Date.parse(ended.time) >= WINDOW_MS - 50, 'not before the window is over');
    assert.not.ok(windowed.find(session, 'x.codex.instruction.delivered', cmd.id), 'Stop does not take it');
    assert.is(e2e.withText(text).length, 0, 'the dropped text never reached the model');
    const late = await windowed.instruct(session, `${text}-AFTER`);
    assert.equal(
      [late.settled.outcome, late.settled.outcome === 'rejected' ? late.settled.detail : undefined],
      ['rejected', 'session ended'],
      'refused once the window is over (D6)',
    );
  });

  test('delivery queue sent mid-run reaches the first model request of codex exec resume, none of the running one (D31)', async () => {
    const { ws, session, release, run } = await startHeld('[[TURN]] queue-first run one command', 'queue-first');
    const text = `STEER-CODEX-QUEUE-${session.slice(-8)}`;
    const cmd = await e2e.stack.accepted(session, INSTRUCT, { text, delivery: 'queue' });
    release();
    const first = await run;
    assert.is(first.code, 0, first.stderr.slice(-2000));
    await e2e.stack.waitFor(
      'session.ended',
      () => e2e.stack.find(session, 'session.ended') ?? e2e.stack.find(session, 'x.codex.session.closed'),
    );
    assert.not.ok(
      e2e.stack.find(session, 'x.codex.instruction.delivered', cmd.id),
      'PreToolUse and PostToolUse of the running turn left it queued',
    );
    assert.is(
      e2e.requestsOf('queue-first').filter((r) => bodyHas(r.body, text)).length,
      0,
      'in no request of the running turn',
    );
    const second = await e2e.run(ws, '[[TURN]] [[TOOLS:0]] queue-second', { resume: session });
    assert.is(second.code, 0, second.stderr.slice(-2000));
    const d = await e2e.stack.delivered(session, cmd);
    assert.equal(
      [(d.data as { delivery?: string }).delivery, (d.data as { moment?: string }).moment],
      ['queue', 'UserPromptSubmit'],
    );
    const resumed = e2e.requestsOf('queue-second');
    assert.ok(resumed.length > 0 && bodyHas(resumed[0]!.body, text), 'in the first model request of the next turn');
  });

  test('steered between runs: an instruction sent after codex exec ends reaches the first model request of codex exec resume', async () => {
    const hop = await startHookHop(e2e.stack.running.adapter.port);
    try {
      const ws = await e2e.workspace({ port: hop.port });
      const { session, run: firstRun } = await e2e.startRun(ws, '[[TURN]] [[TOOLS:0]] resume-first');
      const first = await firstRun;
      assert.is(first.code, 0, first.stderr.slice(-2000));
      const ended = await e2e.stack.waitFor('session.ended', () => e2e.stack.find(session, 'session.ended'));
      assert.equal(ended.data, { reason: 'normal' }, 'SessionEnd reason "other" ends the session normal');
      // D25: inside Codex's resume window (30 minutes) the ended session takes instructions, the
      // way an orchestration script steers between `codex exec` and `codex exec resume`.
      const between = `STEER-CODEX-BETWEEN-${session.slice(-8)}`;
      const queued = await e2e.stack.accepted(session, INSTRUCT, { text: between });
      assert.ok(e2e.stack.find(session, 'control.accepted', queued.id), 'accepted after SessionEnd');

      // The resumed run keeps the id; its SessionStart reaches the adapter and its reply waits here.
      const hold = hop.hold((b) => b.hook_event_name === 'SessionStart' && b.session_id === session);
      const second = e2e.run(ws, '[[TURN]] [[TOOLS:0]] resume-second', { resume: session });
      await Promise.race([
        hold.arrived,
        second.then((r) => {
          throw new Error(`codex exec resume exited before SessionStart: ${r.stderr.slice(-2000)}`);
        }),
      ]);
      const reopened = await e2e.stack.waitFor('session reopened', () =>
        e2e.stack.find(session, 'x.codex.session.reopened'),
      );
      const started = ofSession(session).filter((e) => e.type === 'session.started');
      assert.is(started.length, 2, 'the resumed run started the same session again');
      assert.is((started[1]!.data as { trigger?: string }).trigger, 'resume');
      assert.is(reopened.cause, started[1]!.id, 'caused by the SessionStart observation');
      const text = `STEER-CODEX-RESUMED-${session.slice(-8)}`;
      const cmd = await e2e.stack.accepted(session, INSTRUCT, { text });
      hold.release();
      const run = await second;
      assert.is(run.code, 0, run.stderr.slice(-2000));
      const d = await e2e.stack.delivered(session, cmd);
      const promptRun = ofSession(session)
        .filter((e) => e.type === 'run.started')
        .at(-1);
      assert.ok(seqOf(promptRun) < seqOf(d), "taken at the resumed run's UserPromptSubmit");
      const resumed = e2e.requestsOf('resume-second');
      assert.ok(resumed.length > 0 && bodyHas(resumed[0]!.body, text), 'in the first model request of the resumed run');
      // The one sent between the runs went out at the resumed run's start moment.
      const b = await e2e.stack.delivered(session, queued);
      assert.is((b.data as { moment?: string }).moment, 'SessionStart', "carried by the resumed run's SessionStart");
      assert.ok(seqOf(reopened) < seqOf(b));
      assert.ok(bodyHas(resumed[0]!.body, between), 'in the first model request of codex exec resume');
      assert.is(
        e2e.requestsOf('resume-first').filter((r) => bodyHas(r.body, between)).length,
        0,
        'not in the first run',
      );

      // The resumed run's own SessionEnd closes it again; AEP allows one session.ended per session.
      const closed = await e2e.stack.waitFor('session closed', () => e2e.stack.find(session, 'x.codex.session.closed'));
      assert.equal(closed.data, { reason: 'normal' });
      const mine = ofSession(session);
      assert.is(mine.filter((e) => e.type === 'session.ended').length, 1);
      // Acks reach this consumer twice (as the sender's answer and on the subscription): once per id.
      const positioned = mine.filter(
        (e, i) => e.seq !== undefined && e.source === ended.source && mine.findIndex((x) => x.id === e.id) === i,
      );
      assert.ok(
        positioned.every((e) => e.epoch === ended.epoch),
        'one epoch: positions continue',
      );
      assert.ok(
        positioned.every((e, i) => i === 0 || e.seq! > positioned[i - 1]!.seq!),
        `seq keeps rising across the reopening: ${positioned.map((e) => `${e.seq}:${e.type}`).join(', ')}`,
      );
      assert.equal(checkStream(mine), [], 'the stream rules hold across the reopening');
      const again = await e2e.stack.instruct(session, `${between}-2`);
      assert.is(again.settled.outcome, 'accepted', 'ended again, inside a new resume window');
      // D36: the end event states its window, and the audit of this very stream agrees with the adapter.
      assert.is(ended['resumewindowms'], 30 * 60_000);
      const copy = join(ws.root, 'session.jsonl');
      writeFileSync(
        copy,
        `${ofSession(session)
          .map((e) => JSON.stringify(e))
          .join('\n')}\n`,
      );
      assert.equal(
        (await auditFiles([copy])).violations,
        [],
        'aep-steer audit of the steered-between-runs stream is clean',
      );
    } finally {
      await hop.close();
    }
  });

  test("systemMessage passes Codex's output schema and never reaches the model, while the instruction does", async () => {
    const hop = await startHookHop(e2e.stack.running.adapter.port);
    try {
      const ws = await e2e.workspace({ port: hop.port });
      const { session, release, run } = await e2e.startHeld(ws, '[[TURN]] notice-run run one command', (r) =>
        e2e.turnOf(r).includes('notice-run'),
      );
      const text = `STEER-CODEX-NOTICE-${session.slice(-8)}`;
      const cmd = await e2e.stack.accepted(session, INSTRUCT, { text });
      release();
      assert.is((await run).code, 0);
      const d = await e2e.stack.delivered(session, cmd);
      const moment = (d.data as { moment?: string }).moment;
      assert.is(moment, 'PreToolUse');
      const notice = `aep-steer: 1 instruction from e2e-operator reached the agent (${moment})`;
      const reply = hop.passed.find((p) => p.body.session_id === session && p.body.hook_event_name === moment)!;
      assert.equal(
        JSON.parse(reply.reply),
        { hookSpecificOutput: { hookEventName: moment, additionalContext: text }, systemMessage: notice },
        'the reply tells the user (D27)',
      );
      // Codex drops a whole hook output that breaks its schema (vendor-clis-observed §2.7), so the
      // context arriving proves it took the systemMessage too.
      assert.ok(e2e.withText(text).length > 0, 'the instruction reaches the model');
      assert.is(e2e.withText('aep-steer: 1 instruction').length, 0, 'the notice never does');
    } finally {
      await hop.close();
    }
  });

  test("a subagent's hooks never take the main session's queue", async () => {
    // The main agent spawns a subagent, then runs a shell call that waits for a file; the
    // subagent's first request is held. An instruction queued now must pass the subagent's hooks
    // (agent_id set) untouched and reach the main agent at its PostToolUse.
    const ws = await e2e.workspace();
    const gate = join(ws.root, 'go');
    const { session, release, run } = await e2e.startHeld(ws, `[[TURN]] [[SPAWN]] [[WAITFILE:${gate}]] delegate`, (r) =>
      e2e.turnOf(r).includes('subagent task'),
    );
    const mainWaiting = await e2e.stack.waitFor("the main agent's waiting shell call", () =>
      ofSession(session).find(
        (e) => e.type === 'tool.requested' && (e.data as { tool?: { name?: string } }).tool?.name === 'Bash',
      ),
    );
    const text = `STEER-CODEX-SUB-${session.slice(-8)}`;
    const cmd = await e2e.stack.accepted(session, INSTRUCT, { text });
    release();
    // The subagent runs its own tool and asks the model again before the main agent goes on.
    await e2e.stack.waitFor("the subagent's second request", () =>
      e2e.requestsOf('subagent task').find((r) => bodyHas(r.body, 'TOOL_RAN')),
    );
    // The subagent's PostToolUse reached the adapter before that request, but its event may still be
    // on its way through the relay: wait for it on the stream rather than read what arrived so far.
    const subagentTools = await e2e.stack.waitFor("the subagent's PostToolUse on the stream", () => {
      const seen = ofSession(session).filter((e) => e.type === 'tool.completed' && e.seq! > mainWaiting.seq!);
      return seen.length > 0 ? seen : undefined;
    });
    assert.not.ok(e2e.stack.find(session, 'x.codex.instruction.delivered', cmd.id), 'no subagent hook took it');
    writeFileSync(gate, '');
    assert.is((await run).code, 0);
    const d = await e2e.stack.delivered(session, cmd);
    assert.ok(d.seq! > subagentTools[subagentTools.length - 1]!.seq!, "delivered at the main agent's PostToolUse");
    const withText = e2e.withText(text);
    assert.ok(withText.length > 0, "the main agent's next request carries it");
    assert.ok(
      withText.every((r) => !e2e.turnOf(r).includes('subagent task')),
      'no subagent request carries it',
    );
  });

  test('the adapter reported no errors on the hook path', () => {
    assert.equal(e2e.stack.errors, []);
  });
}

test.run();
