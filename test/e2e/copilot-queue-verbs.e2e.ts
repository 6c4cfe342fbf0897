// D44 end to end on the real GitHub Copilot CLI 1.0.102 hosted by `aep-steer run copilot` (the
// headless server lane, beside the hooks of a trusted folder) against the loopback mock Chat Completions API: three queued
// while a slow shell call runs, the second edited in place, the third moved to the front, the
// queue paused and resumed. What waits stays with the adapter, where the verbs act, until a turn
// ends; then the first goes over as the start of the next turn (D43), one per turn end, so the
// turns after open with them in the new order and the edited text, and the replaced text never
// reaches the model. Paused while a turn ends and resumed with no turn running, the head goes over
// at once.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { auditFiles } from '../../src/audit/audit.js';
import type { AepCommand, AepEvent } from '../../src/protocol/index.js';
import { e2eSuite } from '../support/e2e-stack.js';

const e2e = e2eSuite('copilot', { label: 'copilot queue verbs' });

/** `aep-steer run copilot -p` in a trusted folder, its slow shell call allowed through the relay; resolves once it runs. */
async function hostedRun(tag: string) {
  const ws = await e2e.workspace();
  // The session is the hooks' (the lane joins it): the folder is trusted for every run.
  mkdirSync(join(ws.home, '.copilot'), { recursive: true });
  writeFileSync(join(ws.home, '.copilot', 'config.json'), JSON.stringify({ trustedFolders: [ws.project] }));
  const gate = join(ws.root, `${tag}.go`);
  const from = e2e.stack.events.length;
  const [node, ...argv] = e2e.aepRun('-p', `[[TURN]] [[WAITFILE:${gate}]] ${tag} run the slow command`);
  const child = e2e.track(
    spawn(node!, argv, { cwd: ws.project, env: e2e.runEnv(ws), stdio: ['pipe', 'pipe', 'pipe'] }),
  );
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  child.stdout.resume();
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  const session = await e2e.stack.newSession(from).catch((e: Error) => {
    throw new Error(`${e.message}\n${err}`);
  });
  const all = (type: string): AepEvent[] => e2e.stack.events.filter((e) => e.session === session && e.type === type);
  const of = (type: string, cause?: string) => e2e.stack.find(session, type, cause);
  const accepted = (type: string, data: Record<string, unknown>): Promise<AepCommand> =>
    e2e.stack.accepted(session, type, data);
  const settled = async (verb: string, data: Record<string, unknown>, change: string): Promise<AepEvent> => {
    const cmd = await accepted(`x.copilot.control.${verb}`, data);
    return e2e.stack.waitFor(change, () => of(`x.copilot.${change}`, cmd.id));
  };
  // The slow call asks permission on the server: answered allow through the relay.
  const asked = await e2e.stack.waitFor('the slow call asks', () => all('attention.requested')[0]);
  assert.is((await e2e.respond(session, asked.id, 'allow')).code, 0);
  return { session, all, of, accepted, settled, gate, child, exited, stderr: () => err };
}

if (e2e.installed) {
  test('queue three, edit the second, move the third first, pause and resume: the turns after open with them in that order', async () => {
    const { session, of, settled, accepted, gate, child, exited, stderr } = await hostedRun('qv-first');
    const tag = session.slice(-8);
    const texts = ['ONE', 'TWO', 'THREE'].map((t) => `QV-${t}-${tag}`);
    const edited = `QV-TWO-EDITED-${tag}`;
    const ids: string[] = [];
    for (const text of texts) ids.push((await accepted('x.copilot.control.instruct', { text, delivery: 'queue' })).id);
    const [one, two, three] = ids as [string, string, string];
    assert.is((await settled('edit', { instruction: two, text: edited }, 'instruction.edited')).data?.['version'], 2);
    assert.is((await settled('move', { instruction: three, to: 'front' }, 'instruction.moved')).data?.['position'], 1);
    await settled('hold', { paused: true }, 'queue.held');
    await settled('hold', { paused: false }, 'queue.held');
    for (const id of ids) assert.not.ok(of('x.copilot.instruction.delivered', id), 'nothing leaves mid-turn');
    writeFileSync(gate, '');

    const delivered = await Promise.all(
      ids.map((id) => e2e.stack.waitFor(`delivered ${id}`, () => of('x.copilot.instruction.delivered', id))),
    );
    // One goes over per turn end, as the start of the next turn, in the new order, the edited text
    // with its version; nothing else leaves the queue before its receipt.
    for (const d of delivered) assert.equal([d.data?.['lane'], d.data?.['started']], ['server', true]);
    assert.ok(
      delivered[2]!.seq! < delivered[0]!.seq! && delivered[0]!.seq! < delivered[1]!.seq!,
      'delivered in the moved order',
    );
    assert.is(delivered[1]!.data?.['version'], 2);
    // A receipt (the vendor's user.message) comes before the request that carries it.
    const firstAt = (t: string) => e2e.mock.modelRequests().findIndex((r) => r.text.includes(t));
    await e2e.stack.waitFor('the last one reached the model', () => (firstAt(edited) >= 0 ? true : undefined));
    const requests = e2e.mock.modelRequests();
    const at = [texts[2]!, texts[0]!, edited].map(firstAt);
    assert.ok(
      at[0]! >= 0 && at[0]! < at[1]! && at[1]! < at[2]!,
      `each opens a later turn, in order (${at.join(', ')})`,
    );
    const last = requests[at[2]!]!.text;
    assert.ok(
      last.indexOf(texts[2]!) < last.indexOf(texts[0]!) && last.indexOf(texts[0]!) < last.indexOf(edited),
      'the last turn sees all three in the new order',
    );
    assert.not.ok(
      requests.some((r) => r.text.includes(texts[1]!)),
      'the replaced text never reaches the model',
    );
    const audit = await auditFiles([e2e.stack.logPath]);
    assert.equal(
      audit.violations.filter((v) => [one, two, three].some((id) => v.message.includes(id))),
      [],
    );
    child.stdin.end();
    assert.is(await exited, 0, stderr().slice(-2000));
  });
  test("paused while a turn ends, then resumed with no turn running: the head goes over at once as the next turn's start", async () => {
    const { session, all, of, accepted, settled, gate, child, exited, stderr } = await hostedRun('qr-idle');
    const text = `QR-IDLE-${session.slice(-8)}`;
    const cmd = await accepted('x.copilot.control.instruct', { text, delivery: 'queue' });
    await settled('hold', { paused: true }, 'queue.held');
    writeFileSync(gate, '');
    await e2e.stack.waitFor('the turn ended', () => all('run.finished')[0]);
    assert.not.ok(of('x.copilot.instruction.delivered', cmd.id), 'paused: nothing at the turn end');
    const resumed = await settled('hold', { paused: false }, 'queue.held');
    const d = await e2e.stack.waitFor('delivered', () => of('x.copilot.instruction.delivered', cmd.id));
    // The server may still be closing the turn the hooks saw end: the hand-over then waits for the
    // server's own end of it (`session.idle`), so either way it goes as the next turn's start.
    assert.equal([d.data?.['lane'], d.data?.['started']], ['server', true], JSON.stringify(d.data));
    assert.ok(d.seq! > resumed.seq!, 'after the resume');
    assert.is(all('run.finished').length, 1, 'no other turn ended before it went');
    await e2e.stack.waitFor('the model read it', () =>
      e2e.mock.modelRequests().some((r) => r.text.includes(text)) ? true : undefined,
    );
    child.stdin.end();
    assert.is(await exited, 0, stderr().slice(-2000));
  });
}

test.run();
