// D45: which session `aep-steer mcp` names as the parent of its spawns: the flag (or
// AEP_PARENT_SESSION) always; else Claude Code's CLAUDE_CODE_SESSION_ID, only while the relay's
// roster lists that session (an orchestrator whose session is not on the relay still spawns).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { RelayConsumer } from '../../src/consumer/connection.js';
import { mcpParent, parentToName } from '../../src/mcp/mcp-parent.js';

const rosterOf = (sessions: string[]) =>
  ({ roster: async () => sessions.map((session) => ({ session })) }) as unknown as RelayConsumer;

test('the flag wins over the agent environment; none of them: no parent', () => {
  assert.equal(mcpParent('lead-1', { CLAUDE_CODE_SESSION_ID: 'cc-9' }), { session: 'lead-1', explicit: true });
  assert.equal(mcpParent(undefined, { CLAUDE_CODE_SESSION_ID: 'cc-9' }), { session: 'cc-9', explicit: false });
  assert.equal(mcpParent('', { CLAUDE_CODE_SESSION_ID: '' }), undefined);
});

test('an explicit parent is always named; the agent environment only while the roster lists it', async () => {
  assert.is(await parentToName({ session: 'lead-1', explicit: true }, rosterOf([])), 'lead-1');
  assert.is(await parentToName({ session: 'cc-9', explicit: false }, rosterOf(['cc-9'])), 'cc-9');
  assert.is(await parentToName({ session: 'cc-9', explicit: false }, rosterOf(['other'])), undefined);
  assert.is(await parentToName(undefined, rosterOf(['cc-9'])), undefined);
});

test.run();
