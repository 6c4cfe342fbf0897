// D44, D46 on the board the console draws: each waiting instruction carries who last edited, moved
// or promoted it, as the stream settled it; one nobody changed carries nothing.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { auditFiles } from '../../src/audit/audit.js';
import { queueOfThree } from '../support/queue-log.js';

const dir = mkdtempSync(join(tmpdir(), 'aep-queue-changed-'));
test.after(() => rmSync(dir, { recursive: true, force: true }));

const SESSION = 's-changed';
const PHONE = { identity: 'alice', surface: 'console', device: 'pixel-7' };
const CLI = { identity: 'bob', surface: 'cli' };

test('the session view names who last changed each waiting instruction', async () => {
  const q = queueOfThree(SESSION);
  const [one, two, three] = q.ids as [string, string, string];
  q.verb('edit', { instruction: two, text: 'two, edited', surface: 'console', device: 'pixel-7' }, 'edited', {
    version: 2,
    decided_by: PHONE,
  });
  q.verb('move', { instruction: three, to: 'front' }, 'moved', { position: 1, decided_by: CLI });
  q.verb('move', { instruction: two, to: 'front' }, 'moved', { position: 1, decided_by: CLI });
  const file = join(dir, 'log.jsonl');
  writeFileSync(file, `${q.events.map((e) => JSON.stringify(e)).join('\n')}\n`);
  const r = await auditFiles([file]);
  const queue = r.sessions.find((s) => s.session === SESSION)?.queue ?? [];
  assert.equal(
    queue.map((i) => [i.id, i.changedBy?.change, i.changedBy?.by]),
    [
      [two, 'moved', CLI],
      [three, 'moved', CLI],
      [one, undefined, undefined],
    ],
  );
});

test.run();
