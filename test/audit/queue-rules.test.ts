// D44 in the audit: the queue replayed from the stream finds a delivery while the queue was
// paused, a delivery out of the order a move set, and a delivery of a text an edit replaced; a log
// whose deliveries honour all three is clean.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AepEvent } from '../../src/protocol/index.js';
import { auditFiles } from '../../src/audit/audit.js';
import { queueOfThree } from '../support/queue-log.js';

const dir = mkdtempSync(join(tmpdir(), 'aep-queue-audit-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
const audit = (events: AepEvent[]) => {
  const file = join(dir, `log-${n++}.jsonl`);
  writeFileSync(file, `${events.map((e) => JSON.stringify(e)).join('\n')}\n`);
  return auditFiles([file]);
};

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
