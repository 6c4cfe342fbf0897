// D30: the audit's line for a delivered instruction names the way in: the native lane and the
// vendor's id for it, or the hook moment whose reply carried it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { outcomeText } from '../../src/audit/report.js';
import type { InstructionRecord } from '../../src/audit/views.js';

const delivered = (extra: Record<string, unknown>): InstructionRecord =>
  ({
    id: 'c1',
    session: 's1',
    status: 'delivered',
    delivered: { id: 'e1', time: '2026-01-01T00:00:00Z', queuedMs: 40, ...extra },
  }) as unknown as InstructionRecord;

test('a native lane delivery names the lane and its ref; a hook delivery its moment', () => {
  assert.is(
    outcomeText(delivered({ lane: 'serve', ref: 'c1' })),
    'delivered after 40 ms through the serve lane (ref c1)',
  );
  assert.is(outcomeText(delivered({ moment: 'PostToolUse' })), 'delivered after 40 ms at PostToolUse (hook lane)');
  assert.is(outcomeText(delivered({})), 'delivered after 40 ms');
});

test.run();
