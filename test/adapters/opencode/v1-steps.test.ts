// Which V1 step of opencode's loop begins a turn: a new assistant message whose step before it in
// the session ended with a final `finish` (the loop took a user message saved after the turn's
// answer), not one after a `tool-calls` step, not a repeated frame of a step already seen, and not
// the first step seen or a frame of another session's steps.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { OpencodeEvent } from '../../../src/adapters/opencode/frames.js';
import { V1Steps } from '../../../src/adapters/opencode/v1-stream.js';

const frame = (session: string, id: string, parentID: string, finish?: string): OpencodeEvent => ({
  type: 'message.updated',
  session,
  data: { info: { id, sessionID: session, role: 'assistant', parentID, ...(finish === undefined ? {} : { finish }) } },
});

test('a step after a final step begins a turn; one after a tool-calls step goes on in it', () => {
  const steps = new V1Steps();
  assert.is(steps.began(frame('ses_a', 'm1', 'u1')), false, 'the first step seen');
  assert.is(steps.began(frame('ses_a', 'm1', 'u1', 'tool-calls')), false, 'the same step saved at its end');
  assert.is(steps.began(frame('ses_a', 'm2', 'u2')), false, 'after tool-calls: the same turn');
  assert.is(steps.began(frame('ses_a', 'm2', 'u2', 'stop')), false);
  assert.is(steps.began(frame('ses_a', 'm3', 'u3')), true, 'after the final answer: a new turn');
  assert.is(steps.began(frame('ses_a', 'm3', 'u3')), false, 'its frame again is not new');
});

test("a late copy of an earlier step's frame changes nothing; sessions are apart; other frames are not steps", () => {
  const steps = new V1Steps();
  steps.began(frame('ses_a', 'm1', 'u1', 'tool-calls'));
  steps.began(frame('ses_a', 'm2', 'u1'));
  // The global stream's copy of the first step, after the second began.
  assert.is(steps.began(frame('ses_a', 'm1', 'u1', 'tool-calls')), false);
  steps.began(frame('ses_a', 'm2', 'u1', 'stop'));
  assert.is(steps.began(frame('ses_b', 'm9', 'u9')), false, "another session's first step");
  const user: OpencodeEvent = { type: 'message.updated', session: 'ses_a', data: { info: { id: 'u4', role: 'user' } } };
  assert.is(steps.began(user), false, 'a user message is no step');
  assert.is(steps.began(frame('ses_a', 'm4', 'u4')), true);
});

test.run();
