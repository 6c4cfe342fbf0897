// Codex 0.171.0 end to end: the real CLI runs headless against the loopback mock Responses API;
// this project's relay and adapter run in-process; hooks.json is written by the real installer and
// every hook runs the real shim; instructions go through the relay as a consumer sends them. The
// mock holds a chosen model request so each instruction is queued before the moment that must take
// it: every sequence is deterministic without sleeping.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { auditFiles } from '../../src/audit/audit.js';
import { codex } from '../../src/adapters/codex/table.js';
import { installCodex } from '../../src/adapters/codex/installer.js';
import { checkStream, command, type AepCommand, type AepEvent } from '../../src/protocol/index.js';
import { startMockOpenAi, type MockOpenAi, type RecordedRequest } from '../support/mock-openai.js';
import {
  bodyHas,
  codexHome,
  runCodex,
  startVendorStack,
  vendorBinary,
  workspace,
  writeCodexConfig,
  type CliRun,
  type VendorStack,
  type Workspace,
} from '../support/vendor-e2e.js';

let mock: MockOpenAi;
let stack: VendorStack;
/** The same adapter with a short resume window, to see the window pass (D25). */
let windowed: VendorStack;
const WINDOW_MS = 1500;
const workspaces: Workspace[] = [];

function codexWorkspace(hookPort = stack.running.adapter.port, target: VendorStack = stack): Workspace {
  const ws = workspace('aep-codex-');
  workspaces.push(ws);
  writeCodexConfig(ws, mock.baseUrl);
  // The installer asks the real CLI for each hook's trust key and hash and persists them, so the
  // runs below need no --dangerously-bypass-hook-trust (vendor-clis-observed §2.4).
  const report = installCodex({
    user: true,
    port: hookPort,
    secret: target.secret,
    neutral: codex.replies.neutral,
    attentionTimeoutMs: codex.attentionTimeoutMs,
    // The shim reads the secret from the adapter's state directory (D21).
    env: { CODEX_HOME: codexHome(ws), HOME: ws.home, AEP_CODEX_BIN: binary!, AEP_STATE_DIR: target.stateDir },
  });
  assert.match(report.notes[0] ?? '', /^trusted 11 hooks in /);
  return ws;
}

/** The prompt of the conversation a Responses request belongs to: its last marked user message. */
function promptOf(r: RecordedRequest): string {
  const input =
    (r.body as { input?: { type?: string; role?: string; content?: { text?: string }[] }[] } | undefined)?.input ?? [];
  const users = input
    .filter((i) => i.type === 'message' && i.role === 'user')
    .map((i) => (i.content ?? []).map((c) => c.text ?? '').join(''));
  return [...users].reverse().find((t) => t.includes('[[TURN]]')) ?? '';
}

async function startHeld(
  prompt: string,
  match: (r: RecordedRequest) => boolean,
  target: VendorStack = stack,
): Promise<{ ws: Workspace; session: string; release: () => void; run: Promise<CliRun> }> {
  const ws = codexWorkspace(target.running.adapter.port, target);
  const from = target.events.length;
  const hold = mock.hold(match);
  const run = runCodex(ws, prompt);
  await Promise.race([
    hold.arrived,
    run.then((r) => {
      throw new Error(`codex exited before the held request: ${r.stderr.slice(-2000)}`);
    }),
  ]);
  const session = await target.newSession(from);
  return { ws, session, release: hold.release, run };
}

async function instruct(session: string, text: string, target: VendorStack = stack): Promise<AepCommand> {
  const { cmd, settled } = await target.instruct(session, text);
  assert.is(settled.outcome, 'accepted', JSON.stringify(settled));
  return cmd;
}

const ofSession = (session: string) => stack.events.filter((e) => e.session === session);
const requestsWith = (s: string) => mock.modelRequests().filter((r) => bodyHas(r.body, s));
const seqOf = (e: AepEvent | undefined): number => {
  assert.ok(e, 'event present');
  return e!.seq!;
};
const delivered = (session: string, cmd: AepCommand) =>
  stack.waitFor(`delivered for ${cmd.id}`, () => stack.find(session, 'x.codex.instruction.delivered', cmd.id));
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

const binary = vendorBinary('codex');
const missing = 'Codex 0.171.0 is not installed in .vendor-clis: run scripts/install-vendor-cli.sh codex';

if (binary === undefined) {
  // Under CI a missing CLI is a failure, never a skip.
  if (process.env.CI !== 'true' && process.env.AEP_SKIP_VENDOR_E2E === '1') {
    console.log(`codex e2e not run (AEP_SKIP_VENDOR_E2E=1): ${missing}`);
  } else {
    test('the pinned Codex CLI is installed', () => assert.unreachable(missing));
  }
} else {
  test.before(async () => {
    mock = await startMockOpenAi();
    stack = await startVendorStack('codex');
    windowed = await startVendorStack('codex', { AEP_RESUME_WINDOW_MS: String(WINDOW_MS) });
  });

  test.after(async () => {
    await windowed?.close();
    await stack?.close();
    await mock?.close();
    for (const w of workspaces) rmSync(w.root, { recursive: true, force: true });
  });

  test('PreToolUse delivers a queued instruction to the request carrying the tool result', async () => {
    const { session, release, run } = await startHeld('[[TURN]] pre-tool run one command', (r) =>
      promptOf(r).includes('pre-tool'),
    );
    const text = `STEER-CODEX-PRE-${session.slice(-8)} <keep> "as is"`;
    const cmd = await instruct(session, text);
    release();
    const result = await run;
    assert.is(result.code, 0, result.stderr.slice(-2000));
    const d = await delivered(session, cmd);
    const ack = stack.find(session, 'control.accepted', cmd.id);
    assert.ok(seqOf(ack) < seqOf(d), 'control.accepted comes before delivered');
    assert.type((d.data as { queued_ms?: unknown }).queued_ms, 'number');
    // Taken at PreToolUse: after the tool was requested, before it completed.
    assert.ok(seqOf(stack.find(session, 'tool.requested')) < seqOf(d));
    assert.ok(seqOf(d) < seqOf(stack.find(session, 'tool.completed')));
    const reqs = mock.modelRequests().filter((r) => promptOf(r).includes('pre-tool'));
    assert.not.ok(bodyHas(reqs[0]!.body, text), 'not in the held request');
    assert.ok(bodyHas(reqs[1]!.body, text), 'verbatim in the next request: Codex keeps <tags> and quotes (§2.8)');
    const items = (reqs[1]!.body as { input: { type: string; role?: string; content?: { text?: string }[] }[] }).input;
    const at = items.findIndex((i) => i.role === 'developer' && (i.content ?? []).some((c) => c.text === text));
    assert.ok(at > items.findIndex((i) => i.type === 'function_call'), 'a developer item after the function call');
    assert.is(ofSession(session).filter((e) => e.type === 'x.codex.instruction.delivered').length, 1);
  });

  test('PostToolUse takes what PreToolUse could not fit, and neither instruction is split', async () => {
    const { session, release, run } = await startHeld('[[TURN]] post-tool run one command', (r) =>
      promptOf(r).includes('post-tool'),
    );
    // Three of 4,000 (D2's cap) join past 10,000 (D8): two fit the first moment, the third waits, whole.
    const [a, b, c] = ['A', 'B', 'C'].map((k) => pad(`STEER-CODEX-${k}-${session.slice(-8)}`, 4000)) as [
      string,
      string,
      string,
    ];
    const ca = await instruct(session, a);
    const cb = await instruct(session, b);
    const cc = await instruct(session, c);
    release();
    assert.is((await run).code, 0);
    const [da, db, dc] = [await delivered(session, ca), await delivered(session, cb), await delivered(session, cc)];
    const completed = seqOf(stack.find(session, 'tool.completed'));
    assert.ok(seqOf(da) < completed && seqOf(db) < completed, 'the first two at PreToolUse');
    assert.ok(seqOf(dc) > completed, 'the third at PostToolUse');
    const next = mock.modelRequests().filter((r) => promptOf(r).includes('post-tool'))[1]!;
    assert.ok(
      [a, b, c].every((t) => bodyHas(next.body, t)),
      'all three arrive whole in the request carrying the tool result',
    );
    assert.ok(bodyHas(next.body, `${a}\n\n${b}`), 'the first two joined by a blank line, in FIFO order');
  });

  test('an instruction still queued at SessionEnd waits out the resume window, then drops before any later start', async () => {
    const { session, release, run } = await startHeld(
      '[[TURN]] [[TOOLS:0]] answer-only',
      (r) => promptOf(r).includes('answer-only'),
      windowed,
    );
    const text = `STEER-CODEX-LATE-${session.slice(-8)}`;
    const cmd = await instruct(session, text, windowed);
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
    assert.is(requestsWith(text).length, 0, 'the dropped text never reached the model');
    const late = await windowed.instruct(session, `${text}-AFTER`);
    assert.equal(
      [late.settled.outcome, late.settled.outcome === 'rejected' ? late.settled.detail : undefined],
      ['rejected', 'session ended'],
      'refused once the window is over (D6)',
    );
  });

  test('delivery queue sent mid-run reaches the first model request of codex exec resume, none of the running one (D31)', async () => {
    const { ws, session, release, run } = await startHeld('[[TURN]] queue-first run one command', (r) =>
      promptOf(r).includes('queue-first'),
    );
    const text = `STEER-CODEX-QUEUE-${session.slice(-8)}`;
    const cmd = command({ agent: 'e2e-operator' }, session, {
      type: 'x.codex.control.instruct',
      data: { text, delivery: 'queue' },
      capture: 'redacted',
    });
    assert.is((await stack.send(cmd)).outcome, 'accepted');
    release();
    const first = await run;
    assert.is(first.code, 0, first.stderr.slice(-2000));
    await stack.waitFor(
      'session.ended',
      () => stack.find(session, 'session.ended') ?? stack.find(session, 'x.codex.session.closed'),
    );
    assert.not.ok(
      stack.find(session, 'x.codex.instruction.delivered', cmd.id),
      'PreToolUse and PostToolUse of the running turn left it queued',
    );
    assert.is(
      mock.modelRequests().filter((r) => promptOf(r).includes('queue-first') && bodyHas(r.body, text)).length,
      0,
      'in no request of the running turn',
    );
    const second = await runCodex(ws, '[[TURN]] [[TOOLS:0]] queue-second', session);
    assert.is(second.code, 0, second.stderr.slice(-2000));
    const d = await delivered(session, cmd);
    assert.equal(
      [(d.data as { delivery?: string }).delivery, (d.data as { moment?: string }).moment],
      ['queue', 'UserPromptSubmit'],
    );
    const resumed = mock.modelRequests().filter((r) => promptOf(r).includes('queue-second'));
    assert.ok(resumed.length > 0 && bodyHas(resumed[0]!.body, text), 'in the first model request of the next turn');
  });

  test('steered between runs: an instruction sent after codex exec ends reaches the first model request of codex exec resume', async () => {
    const hop = await startHookHop(stack.running.adapter.port);
    try {
      const ws = codexWorkspace(hop.port);
      const from = stack.events.length;
      const first = await runCodex(ws, '[[TURN]] [[TOOLS:0]] resume-first');
      assert.is(first.code, 0, first.stderr.slice(-2000));
      const session = await stack.newSession(from);
      const ended = await stack.waitFor('session.ended', () => stack.find(session, 'session.ended'));
      assert.equal(ended.data, { reason: 'normal' }, 'SessionEnd reason "other" ends the session normal');
      // D25: inside Codex's resume window (30 minutes) the ended session takes instructions, the
      // way an orchestration script steers between `codex exec` and `codex exec resume`.
      const between = `STEER-CODEX-BETWEEN-${session.slice(-8)}`;
      const queued = await instruct(session, between);
      assert.ok(stack.find(session, 'control.accepted', queued.id), 'accepted after SessionEnd');

      // The resumed run keeps the id; its SessionStart reaches the adapter and its reply waits here.
      const hold = hop.hold((b) => b.hook_event_name === 'SessionStart' && b.session_id === session);
      const second = runCodex(ws, '[[TURN]] [[TOOLS:0]] resume-second', session);
      await Promise.race([
        hold.arrived,
        second.then((r) => {
          throw new Error(`codex exec resume exited before SessionStart: ${r.stderr.slice(-2000)}`);
        }),
      ]);
      const reopened = await stack.waitFor('session reopened', () => stack.find(session, 'x.codex.session.reopened'));
      const started = ofSession(session).filter((e) => e.type === 'session.started');
      assert.is(started.length, 2, 'the resumed run started the same session again');
      assert.is((started[1]!.data as { trigger?: string }).trigger, 'resume');
      assert.is(reopened.cause, started[1]!.id, 'caused by the SessionStart observation');
      const text = `STEER-CODEX-RESUMED-${session.slice(-8)}`;
      const cmd = await instruct(session, text);
      hold.release();
      const run = await second;
      assert.is(run.code, 0, run.stderr.slice(-2000));
      const d = await delivered(session, cmd);
      const promptRun = ofSession(session)
        .filter((e) => e.type === 'run.started')
        .at(-1);
      assert.ok(seqOf(promptRun) < seqOf(d), "taken at the resumed run's UserPromptSubmit");
      const resumed = mock.modelRequests().filter((r) => promptOf(r).includes('resume-second'));
      assert.ok(resumed.length > 0 && bodyHas(resumed[0]!.body, text), 'in the first model request of the resumed run');
      // The one sent between the runs went out at the resumed run's start moment.
      const b = await delivered(session, queued);
      assert.is((b.data as { moment?: string }).moment, 'SessionStart', "carried by the resumed run's SessionStart");
      assert.ok(seqOf(reopened) < seqOf(b));
      assert.ok(bodyHas(resumed[0]!.body, between), 'in the first model request of codex exec resume');
      assert.is(
        mock.modelRequests().filter((r) => promptOf(r).includes('resume-first') && bodyHas(r.body, between)).length,
        0,
        'not in the first run',
      );

      // The resumed run's own SessionEnd closes it again; AEP allows one session.ended per session.
      const closed = await stack.waitFor('session closed', () => stack.find(session, 'x.codex.session.closed'));
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
      const again = await stack.instruct(session, `${between}-2`);
      assert.is(again.settled.outcome, 'accepted', 'ended again, inside a new resume window');
      // D36: the end event states its window, and the audit of this very stream agrees with the adapter.
      assert.is(ended['resumewindowms'], 30 * 60_000);
      const copy = join(mkdtempSync(join(tmpdir(), 'aep-codex-audit-')), 'session.jsonl');
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
    const hop = await startHookHop(stack.running.adapter.port);
    try {
      const ws = codexWorkspace(hop.port);
      const from = stack.events.length;
      const hold = mock.hold((r) => promptOf(r).includes('notice-run'));
      const run = runCodex(ws, '[[TURN]] notice-run run one command');
      await Promise.race([
        hold.arrived,
        run.then((r) => {
          throw new Error(`codex exited before the held request: ${r.stderr.slice(-2000)}`);
        }),
      ]);
      const session = await stack.newSession(from);
      const text = `STEER-CODEX-NOTICE-${session.slice(-8)}`;
      const cmd = await instruct(session, text);
      hold.release();
      assert.is((await run).code, 0);
      const d = await delivered(session, cmd);
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
      assert.ok(requestsWith(text).length > 0, 'the instruction reaches the model');
      assert.is(requestsWith('aep-steer: 1 instruction').length, 0, 'the notice never does');
    } finally {
      await hop.close();
    }
  });

  test("a subagent's hooks never take the main session's queue", async () => {
    // The main agent spawns a subagent, then runs a shell call that waits for a file; the
    // subagent's first request is held. An instruction queued now must pass the subagent's hooks
    // (agent_id set) untouched and reach the main agent at its PostToolUse.
    const gateDir = mkdtempSync(join(tmpdir(), 'aep-codex-gate-'));
    workspaces.push({ root: gateDir, home: gateDir, project: gateDir });
    const gate = join(gateDir, 'go');
    const { session, release, run } = await startHeld(`[[TURN]] [[SPAWN]] [[WAITFILE:${gate}]] delegate`, (r) =>
      promptOf(r).includes('subagent task'),
    );
    const mainWaiting = await stack.waitFor("the main agent's waiting shell call", () =>
      ofSession(session).find(
        (e) => e.type === 'tool.requested' && (e.data as { tool?: { name?: string } }).tool?.name === 'Bash',
      ),
    );
    const text = `STEER-CODEX-SUB-${session.slice(-8)}`;
    const cmd = await instruct(session, text);
    release();
    // The subagent runs its own tool and asks the model again before the main agent goes on.
    await stack.waitFor("the subagent's second request", () =>
      mock.modelRequests().find((r) => promptOf(r).includes('subagent task') && bodyHas(r.body, 'TOOL_RAN')),
    );
    // The subagent's PostToolUse reached the adapter before that request, but its event may still be
    // on its way through the relay: wait for it on the stream rather than read what arrived so far.
    const subagentTools = await stack.waitFor("the subagent's PostToolUse on the stream", () => {
      const seen = ofSession(session).filter((e) => e.type === 'tool.completed' && e.seq! > mainWaiting.seq!);
      return seen.length > 0 ? seen : undefined;
    });
    assert.not.ok(stack.find(session, 'x.codex.instruction.delivered', cmd.id), 'no subagent hook took it');
    writeFileSync(gate, '');
    assert.is((await run).code, 0);
    const d = await delivered(session, cmd);
    assert.ok(d.seq! > subagentTools[subagentTools.length - 1]!.seq!, "delivered at the main agent's PostToolUse");
    const withText = requestsWith(text);
    assert.ok(withText.length > 0, "the main agent's next request carries it");
    assert.ok(
      withText.every((r) => !promptOf(r).includes('subagent task')),
      'no subagent request carries it',
    );
  });

  test('the adapter reported no errors on the hook path', () => {
    assert.equal(stack.errors, []);
  });
}

test.run();
