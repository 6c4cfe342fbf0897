// D44 in the audit: the queue replayed from the stream finds a delivery while the queue was
// paused, a delivery out of the order a move set, and a delivery of a text an edit replaced; a log
// whose deliveries honour all three is clean.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SessionEmitter, command, deliveredType, instructType, type AepEvent } from '../../src/protocol/index.js';
import { queueChangeType, queueVerbType } from '../../src/protocol/types.js';
import { auditFiles } from '../../src/audit/audit.js';

const dir = mkdtempSync(join(tmpdir(), 'aep-queue-audit-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
const audit = (events: AepEvent[]) => {
  const file = join(dir, `log-${n++}.jsonl`);
  writeFileSync(file, `${events.map((e) => JSON.stringify(e)).join('\n')}\n`);
  return auditFiles([file]);
};

const V = 'claude-code';
const T0 = Date.parse('2026-12-01T10:00:00.000Z');

/** A session with three queued instructions accepted, and helpers to change and deliver them. */
function queueOfThree(session: string) {
  const em = new SessionEmitter({ agent: V, session, host: 'h' });
  const sender = { agent: 'alice', host: 'h' };
  let at = T0;
  const events: AepEvent[] = [em.emit({ type: 'session.started', at: at++ })];
  const ids: string[] = [];
  for (const text of ['one', 'two', 'three']) {
    const c = command(sender, session, {
      type: instructType(V),
      data: { text, delivery: 'queue' },
      capture: 'redacted',
      at: at++,
    });
    events.push(c, em.emit({ type: 'control.accepted', cause: c.id, at: at++ }));
    ids.push(c.id);
  }
  const verb = (
    v: 'edit' | 'move' | 'hold',
    data: Record<string, unknown>,
    change: 'edited' | 'moved' | 'held',
    settled: Record<string, unknown>,
  ) => {
    const c = command(sender, session, { type: queueVerbType(V, v), data, capture: 'redacted', at: at++ });
    const subject = typeof data['instruction'] === 'string' ? { subject: data['instruction'] } : {};
    events.push(
      c,
      em.emit({ type: 'control.accepted', cause: c.id, at: at++ }),
      em.emit({ type: queueChangeType(V, change), cause: c.id, ...subject, data: settled, at: at++ }),
    );
  };
  const deliver = (id: string, data: Record<string, unknown> = {}) =>
    events.push(
      em.emit({ type: deliveredType(V), cause: id, data: { moment: 'UserPromptSubmit', ...data }, at: at++ }),
    );
  return { ids: ids as [string, string, string], events, verb, deliver };
}

const rulesOf = async (events: AepEvent[]) => (await audit(events)).violations.map((v) => v.rule).sort();

test('a queue delivered as the sender left it (edited, moved, paused then resumed) is clean', async () => {
  const q = queueOfThree('s-clean');
  const [one, two, three] = q.ids;
  q.verb('edit', { instruction: two, text: 'two, edited' }, 'edited', { version: 2 });
  q.verb('move', { instruction: three, to: 'front' }, 'moved', { position: 1 });
  q.verb('hold', { paused: true }, 'held', { paused: true });
  q.verb('hold', { paused: false }, 'held', { paused: false });
  q.deliver(three);
  q.deliver(one);
  q.deliver(two, { version: 2 });
  assert.equal(await rulesOf(q.events), []);
});

test('a delivery after a pause was acked and before its resume is flagged delivered-while-paused', async () => {
  const q = queueOfThree('s-paused');
  q.verb('hold', { paused: true }, 'held', { paused: true });
  q.deliver(q.ids[0]);
  const r = await audit(q.events);
  assert.equal(
    r.violations.map((v) => v.rule),
    ['delivered-while-paused'],
  );
  assert.match(r.violations[0]!.message, 'while its queue was paused');
});

test('a delivery ahead of an instruction a move put before it is flagged delivered-out-of-order', async () => {
  const q = queueOfThree('s-order');
  const [one, , three] = q.ids;
  q.verb('move', { instruction: three, to: 'front' }, 'moved', { position: 1 });
  q.deliver(one);
  assert.equal(await rulesOf(q.events), ['delivered-out-of-order']);
});

test('a delivery of a text version an edit replaced is flagged delivered-superseded', async () => {
  const q = queueOfThree('s-version');
  const [one, two, three] = q.ids;
  q.verb('edit', { instruction: two, text: 'two, edited' }, 'edited', { version: 2 });
  q.deliver(one);
  q.deliver(two);
  q.deliver(three);
  const r = await audit(q.events);
  assert.equal(
    r.violations.map((v) => v.rule),
    ['delivered-superseded'],
  );
  assert.match(r.violations[0]!.message, 'text version 1 after version 2 replaced it');
});

test.run();
