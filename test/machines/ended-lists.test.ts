// The pieces the steps share to end requests and instructions: the events that end an open
// request, and the context change that remembers what ended (none when nothing did).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { answeredAtAgent, dismissed, resolvedBy } from '../../src/machines/hold-ends.js';
import { AT_AGENT } from '../../src/machines/decided-by.js';
import { settledAll } from '../../src/machines/step.js';
import { finishedAll } from '../../src/machines/withdraw.js';
import type { OpenHold, SessionContext } from '../../src/machines/session-context.js';

const hold = { requestId: 'req-1', hookId: 'h1', openedAt: 1000 } as OpenHold;
const ctx = {
  settled: [{ requestId: 'old', how: 'answered' }],
  finished: [{ id: 'i0', how: 'delivered' }],
} as SessionContext;

test('a dismissed request resolves itself; latency never goes below zero', () => {
  assert.equal(dismissed(hold, 1500), {
    type: 'attention.resolved',
    subject: 'req-1',
    cause: 'req-1',
    resolution: 'dismissed',
    latencyMs: 500,
    decidedBy: { identity: 'adapter', surface: 'agent' },
  });
  assert.is((dismissed(hold, 900) as { latencyMs: number }).latencyMs, 0);
});

test('an answer at the agent is mirrored via oob, then resolves the request, caused by that answer', () => {
  assert.equal(answeredAtAgent(hold, 'ans-1', 'allow', 1250), [
    {
      type: 'attention.answered',
      id: 'ans-1',
      subject: 'req-1',
      cause: 'req-1',
      answer: { option: 'allow' },
      via: 'oob',
    },
    resolvedBy(hold, 'ans-1', 1250, AT_AGENT),
  ]);
  assert.equal(resolvedBy(hold, 'ans-1', 1250, AT_AGENT), {
    type: 'attention.resolved',
    subject: 'req-1',
    cause: 'ans-1',
    resolution: 'answered',
    latencyMs: 250,
    decidedBy: { identity: 'local-user', surface: 'agent' },
  });
});

test('what ended is appended to the remembered lists; nothing ended leaves them as they were', () => {
  assert.equal(settledAll(ctx, 'dismissed', [hold]), {
    settled: [
      { requestId: 'old', how: 'answered' },
      { requestId: 'req-1', how: 'dismissed' },
    ],
  });
  assert.equal(finishedAll(ctx, 'dropped', [{ id: 'i1' }, { id: 'i2' }]), {
    finished: [
      { id: 'i0', how: 'delivered' },
      { id: 'i1', how: 'dropped' },
      { id: 'i2', how: 'dropped' },
    ],
  });
  assert.equal(settledAll(ctx, 'dismissed', []), {});
  assert.equal(finishedAll(ctx, 'dropped', []), {});
});

test.run();
