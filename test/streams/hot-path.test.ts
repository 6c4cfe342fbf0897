// The hook path allocates no Observable and opens no subscription per hook: hook arrivals,
// steps, commits and replies flow through the pipeline's long-lived Subjects and promises.
// Counted on the real adapter, fsynced log, real HTTP, for empty-queue moments and deliveries.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Observable } from 'rxjs';
import { adapter } from '../support/adapter.js';
import { hookBody } from '../support/fake-surface.js';
import { instructCmd } from '../support/session-steps.js';

const S = 's-hot';

async function until(pred: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !pred(); i += 1) await new Promise((r) => setTimeout(r, 5));
  assert.ok(pred(), 'condition reached');
}

test('hooks, steps and replies open no subscription per hook, empty queue or delivering', async () => {
  const a = await adapter({ fsync: true });
  const original = Observable.prototype.subscribe;
  let subscribes = 0;
  try {
    await a.post(hookBody('SessionStart', S));
    await a.post(hookBody('PreToolUse', S, { tool_name: 'Bash' }));
    Observable.prototype.subscribe = function counted(this: Observable<unknown>, ...args: unknown[]) {
      subscribes += 1;
      return (original as (...x: unknown[]) => unknown).apply(this, args);
    } as typeof original;
    for (let i = 0; i < 40; i += 1)
      assert.equal((await a.post(hookBody('PreToolUse', S, { tool_name: 'Bash' }))).json, {});
    for (let i = 0; i < 10; i += 1) {
      a.handle.command(instructCmd(`c-hot-${i}`, `instruction ${i}`, S));
      await until(() => a.events.some((e) => e.type === 'control.accepted' && e.cause === `c-hot-${i}`));
      const reply = await a.post(hookBody('PreToolUse', S, { tool_name: 'Bash' }));
      assert.match(JSON.stringify(reply.json), `instruction ${i}`);
    }
    await until(() => a.events.filter((e) => e.type === 'x.claude-code.instruction.delivered').length === 10);
    Observable.prototype.subscribe = original;
    // 40 empty-queue hooks, 10 commands, 10 deliveries and their 10 write confirmations: none subscribes.
    assert.is(subscribes, 0, `subscriptions opened on the hot path: ${subscribes}`);
    assert.equal(a.errors, []);
  } finally {
    Observable.prototype.subscribe = original;
    await a.handle.close();
  }
});

test('the counter sees a subscription where there is one', () => {
  const original = Observable.prototype.subscribe;
  let n = 0;
  Observable.prototype.subscribe = function counted(this: Observable<unknown>, ...args: unknown[]) {
    n += 1;
    return (original as (...x: unknown[]) => unknown).apply(this, args);
  } as typeof original;
  try {
    new Observable<number>((s) => s.complete()).subscribe();
  } finally {
    Observable.prototype.subscribe = original;
  }
  assert.ok(n >= 1);
});

test.run();
