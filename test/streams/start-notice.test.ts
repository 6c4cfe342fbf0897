// D27 for D43 through the real vendor tables and the actor host: the first moment of a turn a start
// began (its prompt is the start's text) tells the person who started it, in the field the vendor
// shows its user; the adapter does not answer that moment early; the person's own prompt, a start
// that went into a turn begun meanwhile, `--quiet` and a vendor with no such field get nothing.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { claudeCode } from '../../src/adapters/claude-code/table.js';
import { codex } from '../../src/adapters/codex/table.js';
import { qwenCode } from '../../src/adapters/qwen-code/table.js';
import { vendorTables } from '../../src/adapters/registry.js';
import type { VendorTable } from '../../src/adapters/table.js';
import { surfaceFrom } from '../../src/adapters/surface-from.js';
import { ActorHost } from '../../src/streams/actor-host.js';
import type { Effect, SessionItem } from '../../src/streams/step-types.js';
import { command } from '../../src/protocol/index.js';

const S = 'sess-start-notice';
const HINT = 'start it with `aep-steer run codex`';

function host(table: VendorTable, notice?: boolean) {
  const surface = surfaceFrom(table);
  const h = new ActorHost({
    surface,
    instruct: true,
    host: 'h',
    lanes: { native: { deliveries: ['steer'], hint: HINT }, interrupts: false, withdraws: [] },
    starts: { lanes: ['app-server'], hint: HINT },
    ...(notice === undefined ? {} : { notice }),
  });
  const hook = (id: string, event: string, at: number, prompt?: string): Extract<SessionItem, { kind: 'hook' }> => {
    const body = { session_id: S, hook_event_name: event, cwd: '/p', source: 'startup', turn_id: `t-${id}`, prompt };
    return { kind: 'hook', session: S, hookId: id, at, hook: surface.classify(body) };
  };
  h.step(hook('h0', 'SessionStart', 1000));
  h.step({ kind: 'input', session: S, input: { type: 'lane.reach', at: 1010, lane: 'app-server', reaches: true } });
  const start = (id: string, text: string, at: number, from = 'ops') =>
    h.step({
      kind: 'command',
      session: S,
      at,
      command: command({ agent: from, host: 'h' }, S, {
        type: surface.steeringType,
        id,
        data: { text, idle: 'start' },
        capture: 'redacted',
      }),
    });
  const answered = (id: string, at: number, became?: 'steer') =>
    h.step({
      kind: 'input',
      session: S,
      input: { type: 'lane.answered', at, commandId: id, ok: true, ...(became === undefined ? {} : { became }) },
    });
  /** The moment as the adapter meets it: answered early or not, then its reply. */
  const arrive = (item: Extract<SessionItem, { kind: 'hook' }>) => {
    const early = h.answersNeutrally(item);
    const r = h.step(early ? { ...item, answered: 'neutral' } : item);
    const reply = r.effects.find((e): e is Extract<Effect, { kind: 'reply' }> => e.kind === 'reply');
    return { early, body: reply?.reply.body as Record<string, unknown> | undefined };
  };
  return { h, hook, start, answered, arrive };
}

test("Codex and Claude Code: the started turn's first moment tells the person who started it, carrying nothing", () => {
  for (const table of [codex, claudeCode]) {
    const t = host(table);
    const lane = t.start('c1', 'build the docs', 1100).effects.find((e) => e.kind === 'lane');
    assert.ok(lane?.kind === 'lane' && lane.call.verb === 'start', table.token);
    t.answered('c1', 1150);
    const got = t.arrive(t.hook('h1', 'UserPromptSubmit', 1200, 'build the docs'));
    assert.is(got.early, false, `${table.token}: the moment is not answered before its notice`);
    assert.equal(got.body, { systemMessage: 'aep-steer: ops started this turn (UserPromptSubmit)' }, table.token);
    // Told once: the next moment of that turn is the adapter's to answer neutrally at once.
    assert.is(t.arrive(t.hook('h2', 'UserPromptSubmit', 1300, 'build the docs')).early, true, table.token);
  }
});

test('the moment may come before the lane answers the start; the notice rides it all the same', () => {
  const t = host(codex);
  t.start('c1', 'write the tests', 1100, 'ci-bot');
  const got = t.arrive(t.hook('h1', 'UserPromptSubmit', 1200, 'write the tests'));
  assert.equal(got.body, { systemMessage: 'aep-steer: ci-bot started this turn (UserPromptSubmit)' });
});

test("the person's own prompt, and a start that went into a turn begun meanwhile, are told nothing", () => {
  const t = host(codex);
  t.start('c1', 'tidy up', 1100);
  assert.is(t.arrive(t.hook('h1', 'UserPromptSubmit', 1200, 'my own prompt')).early, true);
  t.answered('c1', 1250, 'steer');
  // Codex echoes a steer with UserPromptSubmit: the echo of what the start became says nothing either.
  const echo = t.arrive(t.hook('h2', 'UserPromptSubmit', 1300, 'tidy up'));
  assert.is(echo.body, undefined);
});

test("with queued instructions, the started turn's first moment carries them and says both", () => {
  const t = host(claudeCode);
  t.h.step({
    kind: 'command',
    session: S,
    at: 1050,
    command: command({ agent: 'ci', host: 'h' }, S, {
      type: t.h.surface.steeringType,
      id: 'q1',
      data: { text: 'mind the tests', delivery: 'queue' },
      capture: 'redacted',
    }),
  });
  t.start('c1', 'ship it', 1100);
  const got = t.arrive(t.hook('h1', 'UserPromptSubmit', 1200, 'ship it'));
  assert.equal(
    got.body?.systemMessage,
    'aep-steer: ops started this turn; 1 instruction from ci reached the agent (UserPromptSubmit)',
  );
});

test('--quiet, and a vendor with no field its user alone sees, answer the moment neutrally', () => {
  for (const [table, notice] of [
    [codex, false],
    [qwenCode, undefined],
  ] as const) {
    const t = host(table, notice);
    t.start('c1', 'go on', 1100);
    const got = t.arrive(t.hook('h1', 'UserPromptSubmit', 1200, 'go on'));
    assert.ok(got.body === undefined || !('systemMessage' in got.body), table.token);
  }
});

test('every vendor table says where the person is told, or why it cannot be', () => {
  for (const table of vendorTables.values()) {
    const r = table.replies;
    assert.ok(
      (r.userNotice === undefined) !== (r.noUserNotice === undefined),
      `${table.token}: exactly one of userNotice and noUserNotice`,
    );
    if (r.noUserNotice !== undefined) assert.ok(r.noUserNotice.why.length > 0 && r.noUserNotice.evidence.length > 0);
  }
});

test.run();
