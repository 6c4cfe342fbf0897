// Claude Code 2.1.332 end to end: the real CLI runs headless against a mock Anthropic API on
// loopback; this project's relay and adapter run in-process; hooks are written by the real
// installer into a temp project; instructions go THROUGH THE RELAY as a consumer would send them.
// The mock holds model requests so that each instruction is queued before the moment that must
// take it, which makes every sequence deterministic without sleeping. The relay runs in
// tokens-file mode (D18–D20): the adapter holds an `emit` identity, the operator a command
// identity, and a watch-only watcher follows the whole run at its default `metadata` ceiling.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { command, type AepCommand, type AepEvent } from '../../src/protocol/index.js';
import { auditFiles } from '../../src/audit/audit.js';
import { startClaude } from '../support/claude-cli.js';
import { e2eSuite, type VendorWorkspace } from '../support/e2e-stack.js';
import {
  bashThenText,
  firstUserText,
  toolResultCount,
  type MessagesBody,
  type RecordedRequest,
} from '../support/mock-anthropic.js';
import { freePort } from '../support/readme-blocks.js';
import { bodyHas } from '../support/vendor-e2e.js';

const INSTRUCT = 'x.claude-code.control.instruct';
const e2e = e2eSuite('claude-code', {
  access: {
    commands: [INSTRUCT, 'control.attention.respond'],
    parties: { 'e2e-watcher': [] },
  },
  flags: { attentionTimeoutMs: '40000' },
});
/** What the watch-only watcher was served. */
let watched: { e: AepEvent; raw: string }[] = [];

const ofSession = (session: string) => e2e.stack.events.filter((e) => e.session === session);
const find = (session: string, type: string, cause?: string) => e2e.stack.find(session, type, cause);
const requestsOf = (session: string): RecordedRequest[] => e2e.requestsIn(session);
const instruct = (session: string, text: string): Promise<AepCommand> =>
  e2e.stack.accepted(session, INSTRUCT, { text });

/** Starts a run whose first model request is held; resolves once the session is live on the relay. */
const startHeld = (ws: VendorWorkspace, prompt: string, bypassPermissions = true) =>
  e2e.startHeld(ws, prompt, (r) => r.raw.includes(ws.project), { bypassPermissions });

const delivered = (session: string, cmd: AepCommand) => find(session, 'x.claude-code.instruction.delivered', cmd.id);

function assertAckThenDelivered(session: string, cmd: AepCommand): void {
  const ack = find(session, 'control.accepted', cmd.id)!;
  const d = delivered(session, cmd)!;
  assert.ok(ack && d, 'ack and delivered are both on the stream');
  assert.ok(ack.seq! < d.seq!, 'control.accepted comes before delivered');
  const q = (d.data as { queued_ms?: unknown }).queued_ms;
  assert.type(q, 'number');
  assert.ok(Number.isInteger(q) && (q as number) >= 0, 'queued_ms is a whole number of ms');
  // D9: queued_ms runs from the ack to the reply's write; the delivered event is stamped after it.
  assert.ok(
    (q as number) <= Date.parse(d.time) - Date.parse(ack.time) + 1,
    'queued_ms fits inside the ack → delivered timeline',
  );
  assert.is(
    ofSession(session).filter((e) => e.type === 'x.claude-code.instruction.delivered' && e.cause === cmd.id).length,
    1,
    'delivered exactly once',
  );
}

if (e2e.installed) {
  test.before(async () => {
    watched = await e2e.stack.watch('e2e-watcher');
  });

  test('PreToolUse delivers a queued instruction to the next model request', async () => {
    const ws = await e2e.workspace();
    e2e.mock.setScript(bashThenText(['echo hi']));
    const { session, release, run } = await startHeld(ws, 'Say hi with bash.');
    const text = `Also mention the marker STEER-PRE-${session.slice(0, 8)}.`;
    const cmd = await instruct(session, text);
    release();
    const r = await run;
    assert.is(r.code, 0, r.stderr);
    const reqs = requestsOf(session);
    assert.is(reqs.length, 2, 'one tool call, then the final answer');
    assert.not.ok(reqs[0]!.raw.includes(text), 'the held request predates the instruction');
    assert.ok(
      bodyHas(reqs[1]?.body, `PreToolUse:Bash hook additional context: ${text}`),
      'the next request carries it as PreToolUse context',
    );
    await e2e.stack.delivered(session, cmd);
    assertAckThenDelivered(session, cmd);
  });

  test('Stop delivers while stop_hook_active is false and the model takes another turn', async () => {
    const ws = await e2e.workspace();
    e2e.mock.setScript(bashThenText([], 'Nothing to run.'));
    const { session, release, run } = await startHeld(ws, 'Just answer.');
    const text = `Before you stop, report STEER-STOP-${session.slice(0, 8)}.`;
    const cmd = await instruct(session, text);
    release();
    const r = await run;
    assert.is(r.code, 0, r.stderr);
    const reqs = requestsOf(session);
    // The first Stop carries the instruction and forces a second model request; the second Stop
    // (stop_hook_active true) stays neutral, so there is no third.
    assert.is(reqs.length, 2);
    assert.ok(bodyHas(reqs[1]?.body, `Stop hook additional context: ${text}`));
    await e2e.stack.delivered(session, cmd);
    assertAckThenDelivered(session, cmd);
  });

  test('an instruction still queued at SessionEnd is dropped before session.ended', async () => {
    const ws = await e2e.workspace();
    e2e.mock.setScript(bashThenText([], 'Nothing to run.'));
    const { session, release, run } = await startHeld(ws, 'Just answer.');
    const first = await instruct(session, `First STEER-A-${session.slice(0, 8)}.`);
    const second = e2e.mock.hold((r) => e2e.sessionOf(r) === session);
    release();
    await second.arrived; // the continuation Stop forced: no eligible moment follows it
    const late = await instruct(session, `Too late STEER-B-${session.slice(0, 8)}.`);
    second.release();
    const r = await run;
    assert.is(r.code, 0, r.stderr);
    const ended = await e2e.stack.waitFor('session.ended', () => find(session, 'session.ended'));
    const dropped = find(session, 'x.claude-code.instruction.dropped', late.id);
    assert.ok(dropped, 'the late instruction is dropped');
    assert.equal(dropped!.data, { reason: 'session-ended' });
    assert.ok(dropped!.seq! < ended.seq!, 'dropped comes before session.ended (D10)');
    assert.ok(delivered(session, first), 'the first one was delivered at Stop');
    assert.not.ok(delivered(session, late));
    assert.not.ok(
      requestsOf(session).some((q) => q.raw.includes('Too late STEER-B')),
      'the dropped text never reached the model',
    );
  });

  test('a resumed session reopens: refused after SessionEnd, accepted once --resume starts it, delivered at Stop', async () => {
    const ws = await e2e.workspace();
    e2e.mock.setScript(bashThenText([], 'Nothing to run.'));
    const { session, release, run } = await startHeld(ws, 'Just answer.');
    release();
    const first = await run;
    assert.is(first.code, 0, first.stderr);
    const ended = await e2e.stack.waitFor('session.ended', () => find(session, 'session.ended'));
    assert.equal(ended.data, { reason: 'normal' });
    // D6 until a start moment: the ended session refuses.
    const early = `Too early STEER-EARLY-${session.slice(0, 8)}.`;
    const refused = await e2e.stack.send(e2e.stack.command(session, INSTRUCT, { text: early }));
    assert.equal(
      [refused.outcome, refused.outcome === 'rejected' ? refused.detail : undefined],
      ['rejected', 'session ended'],
      JSON.stringify(refused),
    );
    // --resume keeps the id; its SessionStart reopens the session before the first model request.
    const held = e2e.mock.hold((r) => e2e.sessionOf(r) === session);
    const resumed = e2e.run(ws, 'Answer once more.', { resume: session });
    await Promise.race([
      held.arrived,
      resumed.then((r) => {
        throw new Error(`claude --resume exited before its first request: ${r.stderr}`);
      }),
    ]);
    await e2e.stack.waitFor('session reopened', () => find(session, 'x.claude-code.session.reopened'));
    const text = `After the resume, report STEER-RESUMED-${session.slice(0, 8)}.`;
    const cmd = await instruct(session, text);
    held.release();
    const r = await resumed;
    assert.is(r.code, 0, r.stderr);
    await e2e.stack.delivered(session, cmd);
    assertAckThenDelivered(session, cmd);
    assert.ok(
      requestsOf(session).some((q) => bodyHas(q.body, `Stop hook additional context: ${text}`)),
      "the resumed run's model request carries it",
    );
    assert.not.ok(
      requestsOf(session).some((q) => q.raw.includes('STEER-EARLY')),
      'the refused instruction never reached the model',
    );
    await e2e.stack.waitFor('session closed', () => find(session, 'x.claude-code.session.closed'));
    assert.is(
      ofSession(session).filter((e) => e.type === 'session.ended').length,
      1,
      'one session.ended per session (AEP)',
    );
  });

  test('an instruction to an ended session outside its window is refused session ended', async () => {
    // Claude Code's resume window is 0 (D25): the drop and the refusal ride SessionEnd.
    const ws = await e2e.workspace();
    e2e.mock.setScript(bashThenText([], 'Nothing to run.'));
    const { session, release, run } = await startHeld(ws, 'Just answer.');
    release();
    assert.is((await run).code, 0);
    await e2e.stack.waitFor('session.ended', () => find(session, 'session.ended'));
    const text = `After the end STEER-ENDED-${session.slice(0, 8)}.`;
    const cmd = e2e.stack.command(session, INSTRUCT, { text });
    const settled = await e2e.stack.send(cmd);
    assert.equal(
      [settled.outcome, settled.outcome === 'rejected' ? [settled.reason, settled.detail] : undefined],
      ['rejected', ['refused', 'session ended']],
      JSON.stringify(settled),
    );
    const rejected = find(session, 'control.rejected', cmd.id);
    assert.equal(rejected?.data, { reason: 'refused', detail: 'session ended' });
    assert.not.ok(find(session, 'control.accepted', cmd.id), 'never queued');
  });

  test('systemMessage is shown to the user and absent from the model request, while the instruction reaches the model', async () => {
    const ws = await e2e.workspace();
    e2e.mock.setScript(bashThenText(['echo hi']));
    const { session, release, run } = await startHeld(ws, 'Say hi with bash.');
    const text = `Mention STEER-SEEN-${session.slice(0, 8)}.`;
    const cmd = await instruct(session, text);
    release();
    const r = await run;
    assert.is(r.code, 0, r.stderr);
    await e2e.stack.delivered(session, cmd);
    const notice = `aep-steer: 1 instruction from ${e2e.stack.sender} reached the agent (PreToolUse)`;
    // Claude Code shows the reply's systemMessage to the user as an informational line (D27).
    const shown = r.lines.filter((l) => l['type'] === 'system' && l['subtype'] === 'informational');
    assert.ok(
      shown.some((l) => String(l['content']).includes(notice)),
      `shown to the user: ${JSON.stringify(shown)}`,
    );
    const reqs = requestsOf(session);
    assert.ok(
      bodyHas(reqs[1]?.body, `PreToolUse:Bash hook additional context: ${text}`),
      'the instruction reaches the model',
    );
    assert.not.ok(
      reqs.some((q) => q.raw.includes('aep-steer: 1 instruction')),
      'the notice never reaches the model',
    );
    assert.is(
      (delivered(session, cmd)!.data as { moment?: string }).moment,
      'PreToolUse',
      'the delivered event names the moment',
    );
  });

  test('with the adapter stopped every hook stays silent: no hook error, the run goes on', async () => {
    // Hooks installed for an adapter that is not running (nothing listens on the port).
    const ws = await e2e.workspace({ port: await freePort() });
    e2e.mock.setScript(bashThenText(['echo hi']));
    const r = await e2e.run(ws, 'Say hi with bash.', { args: ['--include-hook-events'] });
    assert.is(r.code, 0, r.stderr);
    const responses = r.lines.filter((l) => l['type'] === 'system' && l['subtype'] === 'hook_response');
    assert.ok(responses.length >= 4, `the hooks ran: ${responses.map((l) => l['hook_event']).join(', ')}`);
    const bad = responses.filter(
      (l) => l['outcome'] !== 'success' || l['exit_code'] !== 0 || String(l['stderr'] ?? '') !== '',
    );
    assert.equal(bad, [], 'every hook succeeded silently');
    assert.not.match(r.stdout + r.stderr, /hook error|ECONNREFUSED/i);
    assert.ok(
      r.lines.some((l) => l['type'] === 'result'),
      'the run finished normally',
    );
  });

  test('UserPromptSubmit delivers an instruction queued between turns', async () => {
    const ws = await e2e.workspace();
    e2e.mock.setScript(bashThenText([], 'Turn answered.'));
    const cli = e2e.track(startClaude({ ws, mockUrl: e2e.mock.url }));
    let cmd: AepCommand | undefined;
    let text = '';
    try {
      cli.sendUser('First question.');
      const first = await cli.waitForLine((l) => l.type === 'result');
      const session = String(first.session_id);
      await e2e.stack.waitFor('run.finished', () => find(session, 'run.finished'));
      // Turn one is over (its Stop passed with nothing queued); the next moment is turn two's prompt.
      text = `For this turn, mention STEER-UPS-${session.slice(0, 8)}.`;
      cmd = await instruct(session, text);
      cli.sendUser('Second question.');
      await cli.waitForLine((l) => l.type === 'result' && l !== first);
    } finally {
      cli.end();
    }
    const r = await cli.done;
    assert.is(r.code, 0, r.stderr);
    const session = cmd!.session;
    const reqs = requestsOf(session);
    assert.is(reqs.length, 2, 'one model request per turn');
    assert.not.ok(reqs[0]!.raw.includes(text));
    assert.ok(bodyHas(reqs[1]?.body, `UserPromptSubmit hook additional context: ${text}`));
    await e2e.stack.delivered(session, cmd!);
    assertAckThenDelivered(session, cmd!);
  });

  test('PostToolUseFailure delivers an instruction queued while the failing tool ran', async () => {
    const ws = await e2e.workspace();
    const go = join(ws.root, 'go');
    // The command waits for the test's signal, so the instruction is queued after PreToolUse
    // and before the tool fails.
    e2e.mock.setScript(bashThenText([`while [ ! -f ${go} ]; do sleep 0.05; done; echo failing >&2; exit 3`]));
    const { session, release, run } = await startHeld(ws, 'Run the failing step.');
    release();
    let cmd: AepCommand | undefined;
    const text = `The step failed; note STEER-FAIL-${session.slice(0, 8)}.`;
    try {
      await e2e.stack.waitFor('tool.requested', () => find(session, 'tool.requested'));
      cmd = await instruct(session, text);
    } finally {
      writeFileSync(go, '');
    }
    const r = await run;
    assert.is(r.code, 0, r.stderr);
    assert.ok(find(session, 'tool.failed'), 'the tool failed');
    const reqs = requestsOf(session);
    assert.is(reqs.length, 2);
    assert.ok(bodyHas(reqs[1]?.body, `PostToolUseFailure:Bash hook additional context: ${text}`));
    await e2e.stack.delivered(session, cmd!);
    assertAckThenDelivered(session, cmd);
  });

  test('joined instructions over 10,000 characters arrive over two moments, none split', async () => {
    const ws = await e2e.workspace();
    e2e.mock.setScript(bashThenText(['echo hi']));
    const { session, release, run } = await startHeld(ws, 'Say hi with bash.');
    const make = (tag: string) => {
      const head = `${tag}-START `;
      const tail = ` ${tag}-END`;
      return head + 'steer '.repeat(1000).slice(0, 4000 - head.length - tail.length) + tail;
    };
    const texts = ['ALPHA', 'BRAVO', 'CHARLIE'].map(make);
    assert.ok(texts.every((t) => t.length === 4000));
    const cmds: AepCommand[] = [];
    for (const t of texts) cmds.push(await instruct(session, t));
    release();
    const r = await run;
    assert.is(r.code, 0, r.stderr);
    const reqs = requestsOf(session);
    assert.is(reqs.length, 2);
    // 4000 + 2 + 4000 fits the 10,000 cap; adding the third would not (D8): PreToolUse takes the
    // first two joined by a blank line, PostToolUse the third, each whole.
    assert.ok(
      bodyHas(reqs[1]?.body, `PreToolUse:Bash hook additional context: ${texts[0]}\n\n${texts[1]}`),
      'first two at PreToolUse',
    );
    assert.ok(bodyHas(reqs[1]?.body, `PostToolUse:Bash hook additional context: ${texts[2]}`), 'third at PostToolUse');
    assert.not.ok(reqs[1]!.raw.includes('persisted-output'), 'nothing moved to a file by the 10,000 cap');
    for (const c of cmds) await e2e.stack.delivered(session, c);
    for (const c of cmds) assertAckThenDelivered(session, c);
  });

  test('PermissionRequest answered allow runs the tool, answered deny does not', async () => {
    const outcomes: Record<string, { file: boolean; reqs: RecordedRequest[]; session: string; requestId: string }> = {};
    for (const [verdict, answer] of [
      ['allow', { option: 'allow' }],
      ['deny', { text: 'Do not create files here; use /tmp instead.' }],
    ] as const) {
      const ws = await e2e.workspace();
      const target = join(ws.project, `${verdict}.txt`);
      e2e.mock.setScript(bashThenText([`touch ${target}`]));
      // Default permission mode: a file-writing Bash call raises PermissionRequest (§1.2).
      const { session, release, run } = await startHeld(ws, `Create ${verdict}.txt with bash.`, false);
      release();
      const requested = await e2e.stack.waitFor('attention.requested', () => find(session, 'attention.requested'));
      assert.is((requested.data as { kind?: string }).kind, 'permission');
      const respond = command({ agent: e2e.stack.sender }, session, {
        type: 'control.attention.respond',
        subject: requested.id,
        data: { answer },
        capture: 'redacted',
      });
      const s = await e2e.stack.send(respond);
      assert.is(s.outcome, 'accepted', JSON.stringify(s));
      const r = await run;
      assert.is(r.code, 0, r.stderr);
      await e2e.stack.waitFor('attention.resolved', () => find(session, 'attention.resolved'));
      outcomes[verdict] = { file: existsSync(target), reqs: requestsOf(session), session, requestId: requested.id };
    }
    assert.ok(outcomes.allow!.file, 'allow: the command ran');
    assert.ok(find(outcomes.allow!.session, 'tool.completed'), 'allow: PostToolUse fired');
    assert.not.ok(outcomes.deny!.file, 'deny: the command did not run');
    assert.ok(
      outcomes.deny!.reqs.some((q) => q.raw.includes('Do not create files here; use /tmp instead.')),
      "deny: the model reads the operator's reason",
    );
    const answered = find(outcomes.deny!.session, 'attention.answered')!;
    assert.is(answered.subject, outcomes.deny!.requestId);
  });

  test("a subagent's hooks do not take the main session's instructions", async () => {
    const ws = await e2e.workspace();
    const isSub = (b: MessagesBody) => firstUserText(b).includes('SUBTASK');
    e2e.mock.setScript((body) => {
      if (!(body.tools ?? []).some((t) => t.name === 'Bash')) return { content: [{ type: 'text', text: 'ok' }] };
      const step = toolResultCount(body);
      if (isSub(body)) {
        return step === 0
          ? { content: [{ type: 'tool_use', name: 'Bash', input: { command: 'echo sub', description: 'sub step' } }] }
          : { content: [{ type: 'text', text: 'Sub done.' }] };
      }
      return step === 0
        ? {
            content: [
              {
                type: 'tool_use',
                name: 'Agent',
                input: {
                  description: 'example subagent',
                  prompt: 'SUBTASK run echo sub',
                  subagent_type: 'general-purpose',
                },
              },
            ],
          }
        : { content: [{ type: 'text', text: 'Main done.' }] };
    });
    const isMine = (r: RecordedRequest) => r.raw.includes(ws.project) && r.body !== undefined && isSub(r.body);
    const { session, release, run } = await e2e.startHeld(ws, 'Delegate the work to a subagent.', isMine);
    const text = `Main agent only: STEER-MAIN-${session.slice(0, 8)}.`;
    const cmd = await instruct(session, text);
    release(); // the subagent's PreToolUse (agent_id set) now fires with the instruction queued
    const r = await run;
    assert.is(r.code, 0, r.stderr);
    await e2e.stack.delivered(session, cmd);
    const reqs = requestsOf(session);
    const subReqs = reqs.filter((q) => q.body !== undefined && isSub(q.body));
    const mainReqs = reqs.filter((q) => q.body !== undefined && !isSub(q.body));
    assert.ok(subReqs.length >= 2, 'the subagent ran a tool and answered');
    assert.ok(find(session, 'delegation.subagent.started'), 'SubagentStart was observed');
    assert.not.ok(
      subReqs.some((q) => q.raw.includes(text)),
      'no subagent request carries the instruction',
    );
    assert.ok(
      mainReqs.some((q) => q.raw.includes(text)),
      'a main-agent request carries it',
    );
    assertAckThenDelivered(session, cmd);
  });

  test('aep-steer audit passes the log this run produced', async () => {
    const result = await auditFiles([e2e.stack.logPath]);
    assert.equal(result.violations, []);
    const delivered = result.instructions.filter((i) => i.status === 'delivered').length;
    const dropped = result.instructions.filter((i) => i.status === 'dropped').length;
    assert.ok(delivered >= 8, `delivered instructions in the log: ${delivered}`);
    assert.ok(dropped >= 1, `dropped instructions in the log: ${dropped}`);
  });

  test('the adapter reported no errors on the hook path, and the relay refused none of its events', () => {
    assert.equal(
      e2e.stack.errors.filter((e) => !e.startsWith('RELAY')),
      [],
    );
    assert.equal(
      e2e.stack.errors.filter((e) => /unauthorized/.test(e)),
      [],
    );
  });

  test('the watch-only watcher followed every instruction to its outcome without reading one word of it', () => {
    const commands = e2e.stack.events.filter((e) => e.type === INSTRUCT);
    assert.ok(commands.length >= 9, `instructions sent: ${commands.length}`);
    const seen = watched.filter((w) => w.e.type === INSTRUCT);
    assert.equal(
      seen.map((w) => w.e.id),
      commands.map((e) => e.id),
    );
    for (const w of seen) {
      assert.is(w.e.capture, 'metadata');
      assert.equal(w.e.data ?? {}, {});
    }
    const texts = commands.map((e) => (e.data as { text: string }).text).filter((t) => t.length >= 12);
    assert.ok(texts.length >= 9);
    assert.not.ok(
      watched.some((w) => texts.some((t) => w.raw.includes(t.slice(0, 40)))),
      'no instruction text reached the watcher',
    );
    // Outcomes are metadata: the watcher saw each delivered and dropped, cause-linked.
    const outcomes = e2e.stack.events
      .filter((e) => /\.instruction\.(delivered|dropped)$/.test(e.type))
      .map((e) => e.id);
    assert.equal(
      watched.filter((w) => /\.instruction\.(delivered|dropped)$/.test(w.e.type)).map((w) => w.e.id),
      outcomes,
    );
  });
}

test.run();
