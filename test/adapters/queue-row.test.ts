// D44: each vendor the queue verbs were built against says who keeps what waits: the adapter, or a
// native lane's own next-turn queue, named among the vendor's lanes, with evidence that exists.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { vendorTables } from '../../src/adapters/registry.js';
import { evidenceProblem } from '../support/mapping-fixture.js';

const EXPECTED: Record<string, 'adapter' | 'none' | readonly string[]> = {
  'claude-code': 'adapter',
  codex: 'adapter',
  cline: 'adapter',
  'qwen-code': 'adapter',
  opencode: 'adapter',
  copilot: 'adapter',
  hermes: 'adapter',
  vscode: 'adapter',
  openhands: 'none',
};

for (const [token, keeps] of Object.entries(EXPECTED)) {
  test(`${token}: the queue row names who keeps what waits, with evidence`, () => {
    const table = vendorTables.get(token);
    assert.ok(table?.queue, `${token} has a queue row`);
    const row = table.queue;
    assert.equal(typeof row.keeps === 'string' ? row.keeps : row.keeps.vendor, keeps);
    if (typeof row.keeps !== 'string') {
      const lanes = (table.lanes ?? []).map((l) => l.name);
      for (const lane of row.keeps.vendor) assert.ok(lanes.includes(lane), `${lane} is one of ${token}'s lanes`);
    }
    assert.ok(row.calls.length > 0);
    assert.is(evidenceProblem(row.evidence), undefined);
  });
}

test.run();
