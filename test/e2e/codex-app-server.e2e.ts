// D30–D33 end to end on the real Codex 0.171.0 against the loopback mock Responses API: the
// person runs `aep-steer run codex` in a terminal (tmux), which starts the adapter's app-server on
// its private socket and runs the stock TUI on it; the adapter follows the thread over the
// app-server protocol and through the hooks under one session id. A `steer` reaches the next model
// request of the running turn on the vendor's receipt, a `queue` the first request of the next
// turn, a withdrawn one never the model, a cancel stops the turn, a resend is one delivery, and a
// dead app-server is said once while the hook lane goes on.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { auditFiles } from '../../src/audit/audit.js';
import { renderText } from '../../src/audit/report.js';
import { codexSocketPath } from '../../src/adapters/codex/app-server/spec.js';
import { connectRpc, RpcFailure } from '../../src/adapters/codex/app-server/rpc.js';
import { STEER_REFUSALS } from '../../src/adapters/codex/app-server/messages.js';
import { descendantsOf, processTable } from '../../src/adapters/tool-processes.js';
import type { AepCommand, AepEvent } from '../../src/protocol/index.js';
import type { RecordedRequest } from '../support/mock-openai.js';
import { e2eSuite } from '../support/e2e-stack.js';
import type { Tui } from '../support/tui.js';
import { RESPOND_EXIT } from '../../src/cli/respond-command.js';
import { bodyHas } from '../support/vendor-e2e.js';

/** The held PermissionRequest hook gives up soon, so Codex asks its own clients (the approvals test). */
const ATTENTION = { AEP_ATTENTION_TIMEOUT_MS: '1500' };
// The adapter's app-server runs with the adapter's environment, as `aep-steer adapter codex` would.
const e2e = e2eSuite('codex', {
  label: 'codex-app-server',
  tmux: true,
  env: (home, e2e) => ({ ...home.env, AEP_CODEX_BIN: e2e.binary, ...ATTENTION }),
});

let tui: Tui;
let session: string;

/** `aep-steer run codex [codex args…]` in a terminal, as a person types it; resolves once the TUI is ready. */
async function runCodexInTui(name: string, ...codexArgs: string[]): Promise<void> {
  const env = { ...e2e.runEnv(e2e.home), ...ATTENTION };
  tui = await e2e.tui(e2e.home, { name, argv: e2e.aepRun(...codexArgs), env });
}

type Item = { type?: string; role?: string; content?: { text?: string }[] };
const itemsOf = (r: RecordedRequest): Item[] => (r.body as { input?: Item[] } | undefined)?.input ?? [];
/**
 * The turn's model requests (those offering tools: a remote TUI also asks the model for the
 * thread's name) whose prompt carries `tag` (its last marked user message).
 */
const requestsOf = (tag: string): RecordedRequest[] =>
  e2e.requestsOf(tag).filter((r) => {
    const tools = (r.body as { tools?: unknown[] } | undefined)?.tools;
    return Array.isArray(tools) && tools.length > 0;
  });
/** The last tool output the model was given in the turn carrying `tag`: that of the turn's own last call. */
const lastOutputOf = (tag: string): string | undefined => {
  const last = requestsOf(tag).at(-1);
  const out =
    last === undefined
      ? undefined
      : itemsOf(last)
          .filter((i) => i.type === 'function_call_output')
          .at(-1);
  return out === undefined ? undefined : JSON.stringify(out);
};
/** How many input items of a request carry `text` (a resend injected twice would show twice). */
const timesIn = (r: RecordedRequest, text: string): number => itemsOf(r).filter((i) => bodyHas(i, text)).length;

const of = (type: string, cause?: string): AepEvent | undefined => e2e.stack.find(session, type, cause);
/** A process is alive: it exists and is not a zombie waiting to be reaped. */
const alive = (pid: number): boolean => {
  try {
    return !/^\d+ \(.*\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
};
const all = (type: string): AepEvent[] => e2e.stack.events.filter((e) => e.session === session && e.type === type);

function send(type: string, data: Record<string, unknown>, id?: string): AepCommand {
  const cmd = e2e.stack.command(session, type, data);
  if (id !== undefined) cmd.id = id;
  return cmd;
}
const accepted = (type: string, data: Record<string, unknown>): Promise<AepCommand> =>
  e2e.stack.accepted(session, type, data);

/** Submits a prompt in the TUI; resolves once its turn's first tool call was requested. */
const turnWithSlowTool = (tag: string, gate: string): Promise<AepEvent> =>
  e2e.typed(
    tui,
    `[[TURN]] [[WAITFILE:${gate}]] ${tag} run the slow command`,
    `${tag}: the slow tool call`,
    (e) => e.session === session && e.type === 'tool.requested',
  );
/** The pids of the shells running their loop while they wait for `gate`. */
const shellsWaitingFor = (gate: string): number[] => {
  const table = processTable() ?? [];
  return table
    .filter((p) => p.argv[0] === '/bin/bash' && p.argv.at(-1)?.includes(gate) === true && alive(p.pid))
    .filter((p) => descendantsOf(p.pid, table).length > 0)
    .map((p) => p.pid);
};
/**
 * A turn with two slow shell calls: Codex hands the first back after 300 ms and lets it go on in
 * the background (`yield_time_ms`), the turn then runs the second. Resolves with both shells'
 * pids once both run their loops (PreToolUse fires before Codex starts a command).
 */
async function turnWithBackgroundCommand(tag: string, gate: string): Promise<number[]> {
  const before = all('tool.requested').length;
  await tui.submit(`[[TURN]] [[TOOLS:2]] [[YIELDFIRST:300]] [[WAITFILE:${gate}]] ${tag} run the slow commands`);
  await e2e.stack
    .waitFor(`${tag}: the second slow call`, () => all('tool.requested')[before + 1])
    .catch((err: Error) => {
      throw new Error(`${err.message}\nthe TUI shows:\n${tui.screen()}`);
    });
  return e2e.stack.waitFor(`${tag}: both commands run`, () => {
    const pids = shellsWaitingFor(gate);
    return pids.length === 2 ? pids : undefined;
  });
}
/** Submits a prompt that needs an approval; resolves with the app-server's own request (answerable in the TUI too). */
const askApproval = (prompt: string, tag: string): Promise<AepEvent> =>
  e2e.typed(
    tui,
    prompt,
    `${tag}: the app-server's request`,
    (e) => e.type === 'attention.requested' && JSON.stringify(e.data?.['respond_via']) === '["control","oob"]',
  );
const finishedAfter = (n: number) => e2e.stack.waitFor('the turn finished', () => all('run.finished')[n]);

if (e2e.installed) {
  test.before(async () => {
    // The run ends its app-server when its terminal closes (SIGHUP): waited for, so nothing outlives the test.
    const socket = `app-server --listen unix://${codexSocketPath(e2e.stack.stateDir)}`;
    e2e.defer(() =>
      e2e.stack.waitFor(
        'the app-server of `aep-steer run codex` to end with its terminal',
        () =>
          (processTable() ?? []).some((p) => p.state !== 'Z' && p.argv.join(' ').includes(socket)) ? undefined : true,
        30_000,
      ),
    );
    await runCodexInTui('codex-app');
  });

  test('run codex: the adapter started its app-server on a private socket; hooks and the lane share the thread id', async () => {
    const sock = codexSocketPath(e2e.stack.stateDir);
    assert.is(statSync(sock).mode & 0o777, 0o600, 'the socket is mode 600');
    assert.is(statSync(join(e2e.stack.stateDir, 'codex')).mode & 0o777, 0o700, 'its directory is mode 700');
    const from = e2e.stack.events.length;
    const gate = join(e2e.home.root, 'first.go');
    const first = tui.submit(`[[TURN]] [[WAITFILE:${gate}]] c-first run the slow command`);
    await first;
    session = await e2e.stack.newSession(from);
    await e2e.stack.waitFor('the lane reaches the session', () =>
      all('x.codex.session.described').find((e) => (e.data?.['lanes'] as string[] | undefined)?.includes('app-server')),
    );
    writeFileSync(gate, '');
    await finishedAfter(0);
    const entry = (await e2e.stack.consumer.roster()).find((r) => r.session === session);
    assert.equal(entry?.lanes, ['hook', 'app-server'], 'the roster names both lanes');
  });

  test("steer while a slow tool runs: in the same turn's next request on the vendor's receipt; a resend is one delivery", async () => {
    const gate = join(e2e.home.root, 'steer.go');
    const runs = all('run.started').length;
    const finished = all('run.finished').length;
    const tool = await turnWithSlowTool('c-steer', gate);
    const text = `STEER-APP-${session.slice(-8)}`;
    const cmd = await accepted('x.codex.control.instruct', { text, delivery: 'steer' });
    const again = await e2e.stack.send(cmd);
    assert.is(again.outcome, 'accepted', 'the resend gets the recorded ack again');
    writeFileSync(gate, '');
    const d = await e2e.stack.waitFor('delivered', () => of('x.codex.instruction.delivered', cmd.id));
    assert.equal([d.data?.['delivery'], d.data?.['lane']], ['steer', 'app-server']);
    assert.is(d.data?.['ref'], tool.run, 'ref: the accepting turn (the hooks name it as the run)');
    const end = await finishedAfter(finished);
    assert.ok(d.seq! < end.seq!, 'delivered before the turn ended');
    const reqs = requestsOf('c-steer');
    assert.ok(reqs.length >= 2, `the tool round made a second request (${reqs.length})`);
    assert.not.ok(bodyHas(reqs[0]!.body, text), 'not in the request that asked for the tool');
    assert.is(timesIn(reqs[1]!, text), 1, "once in the same turn's next request");
    assert.is(timesIn(reqs.at(-1)!, text), 1, 'never injected twice');
    assert.is(all('x.codex.instruction.delivered').filter((e) => e.cause === cmd.id).length, 1);
    // Codex fired UserPromptSubmit with the steer's text: the adapter's own steer, not a new run.
    assert.is(all('run.started').length, runs + 1, 'one run for the turn, none for the steer');
  });

  test('queue sent mid-turn reaches the first request of the next turn; a withdrawn one never reaches the model', async () => {
    const gate = join(e2e.home.root, 'queue.go');
    const finished = all('run.finished').length;
    await turnWithSlowTool('c-queue', gate);
    const text = `QUEUE-APP-${session.slice(-8)}`;
    const gone = `WITHDRAWN-APP-${session.slice(-8)}`;
    const cmd = await accepted('x.codex.control.instruct', { text, delivery: 'queue' });
    const w = await accepted('x.codex.control.instruct', { text: gone, delivery: 'queue' });
    await accepted('x.codex.control.withdraw', { instruction: w.id });
    const dropped = await e2e.stack.waitFor('withdrawn', () =>
      all('x.codex.instruction.dropped').find((e) => e.subject === w.id),
    );
    assert.is(dropped.data?.['reason'], 'withdrawn');
    writeFileSync(gate, '');
    await finishedAfter(finished);
    for (const r of requestsOf('c-queue')) assert.not.ok(bodyHas(r.body, text), 'not in the running turn');
    await tui.submit('[[TURN]] [[TOOLS:0]] c-next say done');
    const d = await e2e.stack.waitFor('delivered', () => of('x.codex.instruction.delivered', cmd.id));
    assert.equal([d.data?.['delivery'], d.data?.['moment']], ['queue', 'UserPromptSubmit']);
    // The reply carrying it is written before Codex sends the request.
    const next = await e2e.stack.waitFor("the next turn's first request", () => requestsOf('c-next')[0]);
    assert.ok(bodyHas(next.body, text), "in the next turn's first request");
    await finishedAfter(finished + 1);
    assert.is(e2e.withText(gone).length, 0, 'the withdrawn text never');
  });

  test('steer with no turn running is refused session-idle; the app-server refuses a stale turn as the lane reads it', async () => {
    const late = await send('x.codex.control.instruct', { text: 'too late', delivery: 'steer' });
    const settled = await e2e.stack.send(late);
    assert.equal(settled.outcome === 'rejected' ? [settled.reason, settled.code] : settled, [
      'refused',
      'session-idle',
    ]);
    // The race with a turn's end, as the real server answers it: both refusals read `turn-ended` (D31).
    const c = await connectRpc(
      codexSocketPath(e2e.stack.stateDir),
      () => undefined,
      () => undefined,
    );
    await c.call('initialize', { clientInfo: { name: 'e2e', version: '1' } });
    c.notify('initialized');
    const turnEnded = async (expectedTurnId: string): Promise<string | undefined> => {
      try {
        await c.call('turn/steer', { threadId: session, input: [{ type: 'text', text: 'x' }], expectedTurnId });
        return 'accepted';
      } catch (err) {
        assert.instance(err, RpcFailure);
        return STEER_REFUSALS.find((r) => r.match.test((err as Error).message))?.reason;
      }
    };
    await c.call('thread/resume', { threadId: session });
    assert.is(await turnEnded(all('run.finished').at(-1)!.run!), 'turn-ended', 'the turn that just ended');
    c.close();
    assert.is(e2e.withText('too late').length, 0);
  });

  test('cancel {scope: run} stops the running turn through turn/interrupt; run.cancelled names the cancel, its run, and the command Codex left running', async () => {
    const gate = join(e2e.home.root, 'never.go');
    const shells = await turnWithBackgroundCommand('c-cancel', gate);
    const started = all('run.started').at(-1)!;
    const cancel = await accepted('control.cancel', { scope: 'run' });
    const cancelled = await e2e.stack.waitFor('run.cancelled', () => of('run.cancelled', cancel.id));
    assert.is(cancelled.data?.['by'], 'control');
    // AEP-0002 §2.1: the terminal names the run its start named (Codex's turn_id).
    assert.ok(started.run, 'the turn named its run');
    assert.is(cancelled.run, started.run);
    // Observed on 0.171.0: the turn ends `interrupted` and the command it was running ends with
    // it, but the one it had sent to the background goes on under the app-server.
    const left = cancelled.data?.['left_running'] as { pid?: number; command?: string }[] | undefined;
    assert.is(left?.length, 1, JSON.stringify(cancelled.data));
    assert.match(String(left![0]!.command), gate, 'what it runs');
    const pid = left![0]!.pid!;
    assert.ok(shells.includes(pid), `one of the turn's commands (${shells.join(', ')})`);
    assert.ok(alive(pid), `pid ${pid} still runs`);
    assert.equal(
      shells.filter((p) => p !== pid && alive(p)),
      [],
      'the command the turn was running is not said left: Codex ended it',
    );
    const again = await send('x.codex.control.instruct', { text: 'after cancel', delivery: 'steer' });
    const settled = await e2e.stack.send(again);
    assert.equal(settled.outcome === 'rejected' ? settled.code : settled, 'session-idle', 'the turn is over');
    // Its gate lets it finish: it was running all along, and leaves nothing behind.
    writeFileSync(gate, '');
    await e2e.stack.waitFor(`pid ${pid} ends once its gate exists`, () => (alive(pid) ? undefined : true));
  });

  test('cancel with kill_tools also ends the command the vendor would leave running; run.cancelled names it killed', async () => {
    const gate = join(e2e.home.root, 'killed.go');
    const shells = await turnWithBackgroundCommand('c-kill', gate);
    const started = all('run.started').at(-1)!;
    const cancel = await accepted('control.cancel', { scope: 'run', kill_tools: true });
    const cancelled = await e2e.stack.waitFor('run.cancelled', () => of('run.cancelled', cancel.id));
    assert.is(cancelled.run, started.run);
    assert.is(cancelled.data?.['left_running'], undefined, JSON.stringify(cancelled.data));
    const killed = cancelled.data?.['killed'] as { pid?: number; command?: string }[] | undefined;
    assert.is(killed?.length, 1, JSON.stringify(cancelled.data));
    assert.match(String(killed![0]!.command), gate);
    assert.ok(shells.includes(killed![0]!.pid!), 'the process that ran the call');
    assert.equal(
      shells.filter((p) => alive(p)),
      [],
      'nothing the turn started runs when run.cancelled says so',
    );
  });

  test('a plain `codex exec` session has the hook lane only', async () => {
    const plain = await e2e.workspace();
    const { session: other, run } = await e2e.startRun(plain, '[[TURN]] [[TOOLS:0]] c-plain say done');
    const ran = await run;
    assert.is(ran.code, 0, ran.stderr.slice(-2000));
    const described = e2e.stack.events.filter((e) => e.session === other && e.type === 'x.codex.session.described');
    assert.ok(described.length > 0);
    for (const e of described) assert.equal(e.data?.['lanes'], ['hook']);
    // Its turns cannot be stopped from here: the refusal says how to get the lane.
    const settled = await e2e.stack.send(e2e.stack.command(other, 'control.cancel', { scope: 'run' }, null));
    assert.equal(settled.outcome === 'rejected' ? [settled.reason, settled.code] : settled, [
      'unsupported',
      'lane-unreached',
    ]);
    assert.match(settled.outcome === 'rejected' ? (settled.detail ?? '') : '', 'aep-steer run codex');
  });

  test('the app-server dies mid-session: said once, the session keeps the hook lane and its queue', async () => {
    const gate = join(e2e.home.root, 'dies.go');
    await turnWithSlowTool('c-dies', gate);
    const kept = await accepted('x.codex.control.instruct', { text: 'KEPT-AFTER-LOSS', delivery: 'queue' });
    const errorsBefore = e2e.stack.errors.length;
    const pid = Number(
      (await import('node:child_process'))
        .execFileSync('pgrep', ['-f', `app-server --listen unix://${codexSocketPath(e2e.stack.stateDir)}`])
        .toString()
        .trim()
        .split('\n')[0],
    );
    process.kill(pid, 'SIGKILL');
    await e2e.stack.waitFor('the lane is gone', () =>
      all('x.codex.session.described').find((e) => JSON.stringify(e.data?.['lanes']) === '["hook"]'),
    );
    await new Promise((r) => setTimeout(r, 500));
    const lost = e2e.stack.errors.slice(errorsBefore).filter((e) => e.includes('app-server lane is gone'));
    assert.is(lost.length, 1, `said once: ${e2e.stack.errors.join('; ')}`);
    assert.not.ok(of('x.codex.instruction.dropped', kept.id), 'the queued instruction keeps its course');
    assert.not.ok(of('x.codex.instruction.delivered', kept.id));
    writeFileSync(gate, '');
  });

  test("the app-server's approvals: answered allow and deny through respond, and in the TUI (oob)", async () => {
    // `run codex` again starts a new app-server (the last one died); the TUI's codex args are
    // passed on: it asks before a command leaves the sandbox.
    tui.kill();
    const from = e2e.stack.events.length;
    await runCodexInTui('codex-app-ask', '-a', 'on-request', '-s', 'read-only');
    const ask = (tag: string) => askApproval(`[[TURN]] [[ESCALATE]] ${tag} run it`, tag);
    const allow = await ask('c-allow');
    session = allow.session!;
    assert.ok(
      e2e.stack.events.slice(from).some((e) => e.type === 'attention.timeout'),
      'the hook asked first, and gave up',
    );
    assert.match(String(allow.data?.['prompt']), 'Permission requested: Bash: ');
    assert.match(String(allow.data?.['prompt']), 'TOOL_RAN_', 'the request says what it runs (D35)');
    const a = await e2e.respond(session, allow.id, 'allow');
    assert.is(a.code, RESPOND_EXIT.answered, a.out);
    await e2e.stack
      .waitFor('the command ran', () =>
        e2e.toolOutputs('c-allow').some((o) => o.includes('TOOL_RAN_')) ? true : undefined,
      )
      .catch((err: Error) => {
        throw new Error(`${err.message}\noutputs: ${e2e.toolOutputs('c-allow').join('\n')}`);
      });
    const late = await e2e.respond(session, allow.id, 'allow');
    assert.is(late.code, RESPOND_EXIT.notPending, 'answered once (D34)');
    // The next prompt waits for this turn's end: typed into a running turn, the TUI steers it in.
    await finishedAfter(0);

    let fin = all('run.finished').length;
    const deny = await ask('c-deny');
    const d = await e2e.respond(session, deny.id, 'deny');
    assert.is(d.code, RESPOND_EXIT.answered, d.out);
    await finishedAfter(fin);
    // The turn's requests carry the thread's history too: only the denied call's own output counts.
    const denied = /echo (TOOL_RAN_\d+)/.exec(String(deny.data?.['prompt']))?.[1];
    assert.ok(denied, String(deny.data?.['prompt']));
    assert.match(lastOutputOf('c-deny') ?? '', 'rejected by user', 'the turn went on with the refusal as the output');
    assert.not.ok(lastOutputOf('c-deny')?.includes(`${denied}\\n`), 'the command never ran');
    assert.not.ok(
      e2e.toolOutputs('c-deny').some((o) => o.includes(`${denied}\\n`)),
      'no output of the turn says it ran',
    );

    fin = all('run.finished').length;
    const oob = await ask('c-oob');
    await tui.shows('proceed');
    tui.keys('y');
    const answered = await e2e.stack.waitFor('answered at the agent', () =>
      all('attention.answered').find((e) => e.subject === oob.id),
    );
    assert.equal([answered.data?.['via'], answered.data?.['answer']], ['oob', { option: 'allow' }]);
    const gone = await e2e.respond(session, oob.id, 'deny');
    assert.is(gone.code, RESPOND_EXIT.notPending, gone.out);
    await finishedAfter(fin);
  });

  test('a file change the model asks for (apply_patch): the request names the file; allow writes it, deny leaves it unwritten and the turn finishes', async () => {
    // The same read-only TUI: a patch writes outside the sandbox, so the app-server asks its clients
    // (`item/fileChange/requestApproval`, whose paths come from the `fileChange` item it names).
    const written = join(e2e.home.project, 'patch-allowed.txt');
    const refused = join(e2e.home.project, 'patch-denied.txt');
    let fin = all('run.finished').length;
    const allow = await askApproval('[[TURN]] [[PATCH:patch-allowed.txt]] c-patch-allow write it', 'c-patch-allow');
    assert.is(allow.session, session, 'the same thread');
    assert.is(allow.data?.['kind'], 'permission');
    assert.is(allow.data?.['prompt'], `Permission requested: apply_patch: add ${written}`, 'what it writes (D35)');
    assert.not.ok(existsSync(written), 'nothing written before the answer');
    const a = await e2e.respond(session, allow.id, 'allow');
    assert.is(a.code, RESPOND_EXIT.answered, a.out);
    await finishedAfter(fin);
    assert.match(readFileSync(written, 'utf8'), /^PATCHED_\d+\n$/, 'allow: the patch was applied');
    assert.match(lastOutputOf('c-patch-allow') ?? '', 'A patch-allowed.txt', 'the model was told the file was written');
    const late = await e2e.respond(session, allow.id, 'deny');
    assert.is(late.code, RESPOND_EXIT.notPending, `answered once (D34): ${late.out}`);
    assert.ok(existsSync(written), 'a late deny takes nothing back');

    fin = all('run.finished').length;
    const deny = await askApproval('[[TURN]] [[PATCH:patch-denied.txt]] c-patch-deny write it', 'c-patch-deny');
    assert.is(deny.data?.['prompt'], `Permission requested: apply_patch: add ${refused}`);
    const d = await e2e.respond(session, deny.id, 'deny');
    assert.is(d.code, RESPOND_EXIT.answered, d.out);
    await finishedAfter(fin);
    assert.not.ok(existsSync(refused), 'deny: the file was never written');
    assert.match(
      lastOutputOf('c-patch-deny') ?? '',
      'patch rejected',
      'the turn went on with the refusal as the output',
    );
    const resolved = all('attention.answered').filter((e) => e.subject === allow.id || e.subject === deny.id);
    assert.equal(
      resolved.map((e) => [e.subject, e.data?.['via'], e.data?.['answer']]),
      [
        [allow.id, 'control', { option: 'allow' }],
        [deny.id, 'control', { option: 'deny' }],
      ],
      'each ends once, answered through control',
    );
  });

  test('the audit of the adapter log finds no violation', async () => {
    const r = await auditFiles([e2e.stack.logPath]);
    assert.equal(r.violations, [], renderText(r));
    const steered = r.instructions.filter((i) => i.status === 'delivered' && i.delivery === 'steer');
    assert.ok(steered.length > 0, 'it saw the steer delivered');
    assert.ok(
      steered.every((i) => i.delivered?.lane === 'app-server'),
      'through the app-server lane',
    );
  });
}

test.run();
