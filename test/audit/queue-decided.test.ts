// D46 in the audit for the queue verbs (D44): each instruction's line names who edited, moved or
// promoted it, a paused queue names who paused it, and a cancel that cleared the queue names who
// withdrew each instruction; the JSON form carries the same records.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SessionEmitter, command, droppedType, instructType, type AepEvent } from '../../src/protocol/index.js';
import { queueChangeType, queueVerbType } from '../../src/protocol/types.js';
import { auditFiles } from '../../src/audit/audit.js';
import { renderText } from '../../src/audit/report.js';

const dir = mkdtempSync(join(tmpdir(), 'aep-queue-decided-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

const V = 'claude-code';
const SESSION = 's-decided';
const PHONE = { identity: 'alice', surface: 'console', device: 'pixel-7' };
const CLI = { identity: 'alice', surface: 'cli' };

function log(): { events: AepEvent[]; ids: string[] } {
  const em = new SessionEmitter({ agent: V, session: SESSION, host: 'h' });
  const sender = { agent: 'alice', host: 'h' };
  let at = Date.parse('2026-12-01T10:00:00.000Z');
  const events: AepEvent[] = [em.emit({ type: 'session.started', at: at++ })];
  const ids: string[] = [];
  for (const text of ['one', 'two', 'three']) {
    const c = command(sender, SESSION, { type: instructType(V), data: { text }, at: at++ });
    events.push(c, em.emit({ type: 'control.accepted', cause: c.id, at: at++ }));
    ids.push(c.id);
  }
  const verb = (
    v: 'edit' | 'move' | 'hold',
    data: Record<string, unknown>,
    change: 'edited' | 'moved' | 'held',
    settled: Record<string, unknown>,
  ): void => {
    const c = command(sender, SESSION, { type: queueVerbType(V, v), data, at: at++ });
    const subject = typeof data['instruction'] === 'string' ? { subject: data['instruction'] } : {};
    events.push(
      c,
      em.emit({ type: 'control.accepted', cause: c.id, at: at++ }),
      em.emit({ type: queueChangeType(V, change), cause: c.id, ...subject, data: settled, at: at++ }),
    );
  };
  verb('edit', { instruction: ids[1], text: 'two, edited', surface: 'console', device: 'pixel-7' }, 'edited', {
    version: 2,
    decided_by: PHONE,
  });
  verb('move', { instruction: ids[2], to: 'front' }, 'moved', { position: 1, decided_by: CLI });
  verb('hold', { paused: true, surface: 'console', device: 'pixel-7' }, 'held', { paused: true, decided_by: PHONE });
  // A cancel {clear: true} acked: each waiting instruction dropped `withdrawn`, caused by the cancel.
  const cancel = command({ agent: 'carol', host: 'h' }, SESSION, {
    type: 'control.cancel',
    data: { scope: 'run', clear: true, surface: 'mcp' },
    at: at++,
  });
  events.push(cancel, em.emit({ type: 'control.accepted', cause: cancel.id, at: at++ }));
  events.push(
    em.emit({
      type: droppedType(V),
      cause: cancel.id,
      subject: ids[0]!,
      data: { reason: 'withdrawn', decided_by: { identity: 'carol', surface: 'mcp' } },
      at: at++,
    }),
  );
  return { events, ids };
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
