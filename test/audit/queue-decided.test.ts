// D46 in the audit for the queue verbs (D44): each instruction's line names who edited, moved or
// promoted it, a paused queue names who paused it, and a cancel that cleared the queue names who
// withdrew each instruction; the JSON form carries the same records.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AepEvent } from '../../src/protocol/index.js';
import { auditFiles } from '../../src/audit/audit.js';
import { renderText } from '../../src/audit/report.js';
import { queueOfThree } from '../support/queue-log.js';

const dir = mkdtempSync(join(tmpdir(), 'aep-queue-decided-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

const SESSION = 's-decided';
const PHONE = { identity: 'alice', surface: 'console', device: 'pixel-7' };
const CLI = { identity: 'alice', surface: 'cli' };

function log(): { events: AepEvent[]; ids: string[] } {
  const q = queueOfThree(SESSION);
  const [one, two, three] = q.ids;
  q.verb('edit', { instruction: two, text: 'two, edited', surface: 'console', device: 'pixel-7' }, 'edited', {
    version: 2,
    decided_by: PHONE,
  });
  q.verb('move', { instruction: three, to: 'front' }, 'moved', { position: 1, decided_by: CLI });
  q.verb('hold', { paused: true, surface: 'console', device: 'pixel-7' }, 'held', { paused: true, decided_by: PHONE });
  q.clear('carol', [one], { identity: 'carol', surface: 'mcp' });
  return { events: q.events, ids: q.ids };
}

test('the audit names who changed each instruction, who paused the queue and who cleared it', async () => {
  const { events, ids } = log();
  const file = join(dir, 'log.jsonl');
  writeFileSync(file, `${events.map((e) => JSON.stringify(e)).join('\n')}\n`);
  const r = await auditFiles([file]);
  const byId = new Map(r.instructions.map((i) => [i.id, i]));
  assert.equal(
    byId.get(ids[1]!)?.changes?.map((c) => [c.kind, c.decidedBy]),
    [['edited', PHONE]],
  );
  assert.equal(
    byId.get(ids[2]!)?.changes?.map((c) => [c.kind, c.decidedBy]),
    [['moved', CLI]],
  );
  assert.is(byId.get(ids[0]!)?.changes, undefined, 'an instruction nobody changed lists no changes');
  assert.equal(byId.get(ids[0]!)?.dropped?.decidedBy, { identity: 'carol', surface: 'mcp' });
  assert.equal(r.sessions.find((s) => s.session === SESSION)?.pausedBy, PHONE);

  const text = renderText(r);
  assert.match(text, 'accepted → edited by alice via console (pixel-7) → still pending');
  assert.match(text, 'accepted → moved by alice via cli → still pending');
  assert.match(text, 'dropped (withdrawn by carol via mcp)');
  assert.match(text, `session ${SESSION}  queue paused by alice via console (pixel-7)`);
});

test.run();
