// D27 through the real vendor tables and the actor host: the reply that delivers also tells the
// user (how many, from whom) where the vendor has a field the model does not read, `--quiet`
// turns it off, and the delivered event names the moment that carried it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { claudeCode } from '../../src/adapters/claude-code/table.js';
import { codex } from '../../src/adapters/codex/table.js';
import { qwenCode } from '../../src/adapters/qwen-code/table.js';
import type { VendorTable } from '../../src/adapters/table.js';
import { surfaceFrom } from '../../src/adapters/surface-from.js';
import { ActorHost } from '../../src/streams/actor-host.js';
import type { Effect } from '../../src/streams/step-types.js';
import { command } from '../../src/protocol/index.js';

const S = 'sess-notice';

function deliver(table: VendorTable, notice?: boolean) {
  const surface = surfaceFrom(table);
  const host = new ActorHost({ surface, instruct: true, host: 'h', ...(notice === undefined ? {} : { notice }) });
  const hook = (id: string, event: string, at: number) => {
    const body = {
      session_id: S,
      hook_event_name: event,
      tool_name: 'Bash',
      tool_input: { command: 'ls' },
      cwd: '/p',
      source: 'startup',
    };
    return host.step({ kind: 'hook', session: S, hookId: id, at, hook: surface.classify(body) });
  };
  hook('h0', 'SessionStart', 1000);
  for (const [id, from] of [
    ['c1', 'ops'],
    ['c2', 'ci'],
    ['c3', 'ops'],
  ] as const) {
    host.step({
      kind: 'command',
      session: S,
      at: 1100,
      command: command({ agent: from, host: 'h' }, S, {
        type: surface.steeringType,
        id,
        data: { text: `do ${id}` },
        capture: 'redacted',
      }),
    });
  }
  const r = hook('h1', 'PostToolUse', 1500);
  const reply = r.effects.find((e): e is Extract<Effect, { kind: 'reply' }> => e.kind === 'reply')!;
  const written = host.step({ kind: 'input', session: S, input: { type: 'reply.written', at: 1600, hookId: 'h1' } });
  return { body: reply.reply.body as Record<string, unknown>, delivered: written.events };
}

test('Claude Code and Codex replies carry a systemMessage naming the count and the senders once each', () => {
  for (const table of [claudeCode, codex]) {
    const { body } = deliver(table);
    assert.equal(
      body,
      {
        hookSpecificOutput: { hookEventName: 'PostToolUse', additionalContext: 'do c1\n\ndo c2\n\ndo c3' },
        systemMessage: 'aep-steer: 3 instructions from ops, ci reached the agent (PostToolUse)',
      },
      table.token,
    );
  }
});

test('--quiet leaves the reply as the context alone; a vendor without a user field never gets one', () => {
  assert.equal(Object.keys(deliver(claudeCode, false).body), ['hookSpecificOutput']);
  assert.equal(Object.keys(deliver(qwenCode).body), ['hookSpecificOutput']);
});

test('instruction.delivered names the moment whose reply carried it', () => {
  const { delivered } = deliver(codex);
  assert.equal(
    delivered.map((e) => [e.type, e.cause, (e.data as { moment?: string }).moment]),
    [
      ['x.codex.instruction.delivered', 'c1', 'PostToolUse'],
      ['x.codex.instruction.delivered', 'c2', 'PostToolUse'],
      ['x.codex.instruction.delivered', 'c3', 'PostToolUse'],
    ],
  );
  assert.equal((delivered[0]!.data as { queued_ms: number }).queued_ms, 500);
});

test.run();
