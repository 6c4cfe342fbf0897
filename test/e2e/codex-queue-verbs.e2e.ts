// D44 end to end on the real Codex 0.171.0 run with `aep-steer run codex` (the TUI on the adapter's
// app-server, with the hook lane beside it) against the loopback mock Responses API: three queued
// during a turn, the second edited in place, the third moved to the front, the queue paused: the
// next turn starts without them; resumed, the turn after carries all three in the new order with
// the edited text. A queued one promoted while a slow tool runs goes in through `turn/steer` into
// the same turn's next request. A cancel mid-turn stops the turn and keeps what waits for the next
// turn; a cancel with `clear` withdraws it, each drop caused by the cancel.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { auditFiles } from '../../src/audit/audit.js';
import { codexSocketPath } from '../../src/adapters/codex/app-server/spec.js';
import { processTable } from '../../src/adapters/tool-processes.js';
import type { AepCommand, AepEvent } from '../../src/protocol/index.js';
import type { RecordedRequest } from '../support/mock-openai.js';
import { e2eSuite } from '../support/e2e-stack.js';
import type { Tui } from '../support/tui.js';
import { bodyHas } from '../support/vendor-e2e.js';

const e2e = e2eSuite('codex', {
  label: 'codex-queue-verbs',
  tmux: true,
  env: (home, e2e) => ({ ...home.env, AEP_CODEX_BIN: e2e.binary, AEP_ATTENTION_TIMEOUT_MS: '1500' }),
});

let tui: Tui;
let session: string;

/** The turn's model requests (those offering tools) whose prompt carries `tag`. */
const requestsOf = (tag: string): RecordedRequest[] =>
  e2e.requestsOf(tag).filter((r) => {
    const tools = (r.body as { tools?: unknown[] } | undefined)?.tools;
    return Array.isArray(tools) && tools.length > 0;
  });
const of = (type: string, cause?: string): AepEvent | undefined => e2e.stack.find(session, type, cause);
const all = (type: string): AepEvent[] => e2e.stack.events.filter((e) => e.session === session && e.type === type);
const accepted = (type: string, data: Record<string, unknown>): Promise<AepCommand> =>
  e2e.stack.accepted(session, type, data);
/** Sends a queue verb and waits for the adapter's event that settles it. */
async function settled(verb: string, data: Record<string, unknown>, change: string): Promise<AepEvent> {
  const cmd = await accepted(`x.codex.control.${verb}`, data);
  return e2e.stack.waitFor(change, () => of(`x.codex.${change}`, cmd.id));
}
const finishedAfter = (n: number) => e2e.stack.waitFor('the turn finished', () => all('run.finished')[n]);
/** Submits a prompt whose turn runs one slow tool until `gate` exists; resolves once the tool was requested. */
const turnWithSlowTool = (tag: string, gate: string): Promise<AepEvent> =>
  e2e.typed(
    tui,
    `[[TURN]] [[WAITFILE:${gate}]] ${tag} run the slow command`,
    `${tag}: the slow tool call`,
    (e) => e.session === session && e.type === 'tool.requested',
  );
/** Runs a turn without tools and resolves with its first model request. */
async function quickTurn(tag: string): Promise<RecordedRequest> {
  const finished = all('run.finished').length;
  await tui.submit(`[[TURN]] [[TOOLS:0]] ${tag} say done`);
  await finishedAfter(finished);
  return e2e.stack.waitFor(`${tag}: its first request`, () => requestsOf(tag)[0]);
}

if (e2e.installed) {
  test.before(async () => {
    const socket = `app-server --listen unix://${codexSocketPath(e2e.stack.stateDir)}`;
    e2e.defer(() =>
      e2e.stack.waitFor(
        'the app-server of `aep-steer run codex` to end with its terminal',
        () =>
          (processTable() ?? []).some((p) => p.state !== 'Z' && p.argv.join(' ').includes(socket)) ? undefined : true,
        30_000,
      ),
    );
    const env = { ...e2e.runEnv(e2e.home), AEP_ATTENTION_TIMEOUT_MS: '1500' };
    tui = await e2e.tui(e2e.home, { name: 'codex-queue', argv: e2e.aepRun(), env });
    const from = e2e.stack.events.length;
    const gate = join(e2e.home.root, 'first.go');
    await tui.submit(`[[TURN]] [[WAITFILE:${gate}]] q-first run the slow command`);
    session = await e2e.stack.newSession(from);
    await e2e.stack.waitFor('the lane reaches the session', () =>
      all('x.codex.session.described').find((e) => (e.data?.['lanes'] as string[] | undefined)?.includes('app-server')),
    );
    writeFileSync(gate, '');
    await finishedAfter(0);
  });

  test('queue three, edit the second, move the third first, pause: the next turn has none; resumed, the one after has all three in the new order', async () => {
    const gate = join(e2e.home.root, 'queue.go');
    const finished = all('run.finished').length;
    await turnWithSlowTool('q-three', gate);
    const tag = session.slice(-8);
    const texts = ['ONE', 'TWO', 'THREE'].map((t) => `QV-${t}-${tag}`);
    const edited = `QV-TWO-EDITED-${tag}`;
    const ids: string[] = [];
    for (const text of texts) ids.push((await accepted('x.codex.control.instruct', { text, delivery: 'queue' })).id);
    const [one, two, three] = ids as [string, string, string];
    assert.is((await settled('edit', { instruction: two, text: edited }, 'instruction.edited')).data?.['version'], 2);
    assert.is((await settled('move', { instruction: three, to: 'front' }, 'instruction.moved')).data?.['position'], 1);
    await settled('hold', { paused: true }, 'queue.held');
    writeFileSync(gate, '');
    await finishedAfter(finished);
    const paused = await quickTurn('q-paused');
    for (const t of [...texts, edited]) assert.not.ok(bodyHas(paused.body, t), 'the paused queue gives nothing');
    for (const id of ids) assert.not.ok(of('x.codex.instruction.delivered', id));

    await settled('hold', { paused: false }, 'queue.held');
    const next = await quickTurn('q-resumed');
    const body = JSON.stringify(next.body);
    const at = [texts[2]!, texts[0]!, edited].map((t) => body.indexOf(t));
    assert.ok(
      at.every((i) => i >= 0),
      `all three in the resumed turn's first request (${at.join(', ')})`,
    );
    assert.ok(at[0]! < at[1]! && at[1]! < at[2]!, `in the moved order (${at.join(', ')})`);
    assert.not.ok(body.includes(texts[1]!), 'the replaced text is not sent');
    const d2 = await e2e.stack.waitFor('delivered', () => of('x.codex.instruction.delivered', two));
    assert.is(d2.data?.['version'], 2);
    assert.ok(of('x.codex.instruction.delivered', one) && of('x.codex.instruction.delivered', three));
    const audit = await auditFiles([e2e.stack.logPath]);
    assert.equal(
      audit.violations.filter((v) => ids.some((id) => v.message.includes(id))),
      [],
    );
  });

  test("a queued instruction promoted while a slow tool runs goes in through turn/steer, in the same turn's next request", async () => {
    const gate = join(e2e.home.root, 'promote.go');
    const finished = all('run.finished').length;
    await turnWithSlowTool('q-promote', gate);
    const text = `QV-PROMOTED-${session.slice(-8)}`;
    const cmd = await accepted('x.codex.control.instruct', { text, delivery: 'queue' });
    const p = await settled('promote', { instruction: cmd.id }, 'instruction.promoted');
    assert.is(p.data?.['lane'], 'app-server');
    writeFileSync(gate, '');
    const d = await e2e.stack.waitFor('delivered', () => of('x.codex.instruction.delivered', cmd.id));
    assert.equal([d.data?.['delivery'], d.data?.['lane']], ['steer', 'app-server']);
    const end = await finishedAfter(finished);
    assert.ok(d.seq! < end.seq!, 'within the turn');
    const reqs = requestsOf('q-promote');
    assert.ok(reqs.length >= 2, `a tool round (${reqs.length})`);
    assert.not.ok(bodyHas(reqs[0]!.body, text));
    assert.ok(bodyHas(reqs[1]!.body, text), "the same turn's next request carries it");
  });

  test('cancel mid-turn stops the turn and keeps what waits for the next turn; with clear, what waits is withdrawn', async () => {
    const gate = join(e2e.home.root, 'cancel.go');
    await turnWithSlowTool('q-cancel', gate);
    const text = `QV-KEPT-${session.slice(-8)}`;
    const kept = await accepted('x.codex.control.instruct', { text, delivery: 'queue' });
    const cancel = await accepted('control.cancel', { scope: 'run' });
    await e2e.stack.waitFor('run.cancelled', () => of('run.cancelled', cancel.id));
    assert.not.ok(
      all('x.codex.instruction.dropped').some((e) => e.cause === kept.id),
      'still waiting',
    );
    writeFileSync(gate, '');
    const next = await quickTurn('q-after-cancel');
    assert.ok(bodyHas(next.body, text), "the next turn's first request carries it");

    const gate2 = join(e2e.home.root, 'clear.go');
    await turnWithSlowTool('q-clear', gate2);
    const gone = [`QV-CLEARED-A-${session.slice(-8)}`, `QV-CLEARED-B-${session.slice(-8)}`];
    const cleared: string[] = [];
    for (const t of gone) cleared.push((await accepted('x.codex.control.instruct', { text: t, delivery: 'queue' })).id);
    const clear = await accepted('control.cancel', { scope: 'run', clear: true });
    await e2e.stack.waitFor('run.cancelled', () => of('run.cancelled', clear.id));
    for (const id of cleared) {
      const drop = await e2e.stack.waitFor(`${id} withdrawn`, () =>
        all('x.codex.instruction.dropped').find((e) => e.subject === id),
      );
      assert.equal([drop.cause, drop.data?.['reason']], [clear.id, 'withdrawn']);
    }
    writeFileSync(gate2, '');
    const after = await quickTurn('q-after-clear');
    for (const t of gone) assert.not.ok(bodyHas(after.body, t), 'a cleared instruction never reaches the model');
  });
}

test.run();
