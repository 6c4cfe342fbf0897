// opencode 1.18.33 as a table (D50). opencode has no command hooks: the adapter follows an
// `opencode serve` server's event stream (source.ts) and steers over its HTTP API (lane.ts).
// Every frame is an observation (nothing is written back, so no row carries context); the
// steering verbs are the lane's: steer and queue as V2 `delivery`, start on idle, cancel as
// `interrupt`, permission requests as held requests. Shapes: copilot-opencode-observed §2 and
// `test/e2e/opencode-serve.e2e.ts` against the loopback mock model.
import { str } from '../hook-input.js';
import { namedToolCompleted, observation as spec, toolOf } from '../hook-maps.js';
import { mechanicalFallback } from '../table.js';
import type { MapRule, MomentRow, VendorTable } from '../table.js';
import { dialectSession } from '../claude-dialect.js';
import { opencodeOptions } from './options.js';
import { opencodeSource } from './source.js';

const TOKEN = 'opencode';
const OBSERVED = 'copilot-opencode-observed §2';
const E2E = 'e2e/opencode-serve';
const NO_REPLY = 'a server event: opencode reads no reply';

const observe = (evidence = OBSERVED): MomentRow => ({ role: 'observe', reason: NO_REPLY, evidence });

const maps: Record<string, MapRule> = {
  // The connection's own announcement of a session it learnt of: the session's start here.
  'aep.session.seen': () => [spec('session.started', { client: { name: 'opencode-serve' } })],
  // Said by `aep.session.seen` already.
  'session.created': () => [],
  'aep.turn.started': (input) => [{ ...spec('run.started', { trigger: 'user' }), run: str(input.turnId) ?? 'turn' }],
  // An interrupted turn is the core's `run.cancelled` (D33); a turn that ran out is finished.
  'aep.turn.ended': (input) =>
    input.interrupted === true ? [] : [{ ...spec('run.finished', {}), run: str(input.turnId) ?? 'turn' }],
  'session.next.tool.called': (input) => [spec('tool.requested', { tool: toolOf(input) }, str(input.tool_name))],
  'session.next.tool.success': namedToolCompleted,
  'session.next.tool.failed': (input) => [
    {
      ...spec(
        'tool.failed',
        { tool: toolOf(input), error: { type: input.is_interrupt === true ? 'interrupt' : 'tool_error' } },
        str(input.tool_name),
      ),
      severity: 'warning',
    },
  ],
  'session.next.step.failed': (input) => [
    { ...spec('run.failed', { reason: str(input.error) ?? 'error' }), severity: 'error' },
  ],
  'session.next.compaction.ended': () => [spec('session.compacted', {})],
  // Raised as held requests by the lane (approval facts); the frames repeat them.
  'permission.v2.asked': () => [],
  'permission.v2.replied': () => [],
  'session.deleted': () => [],
};

export const opencode: VendorTable = {
  token: TOKEN,
  version: '1.18.33',
  steering: 'instruct',
  port: 8398, // D15: the adapter's own endpoints (healthz)
  attentionTimeoutMs: 55_000, // D14
  ...dialectSession,
  unlistedReason: NO_REPLY,
  source: opencodeSource,
  options: opencodeOptions,
  // D44: the server cannot edit, reorder or take back a prompt it admitted, so what is queued during
  // a turn stays the adapter's until the turn ends (machines/queue-handover.ts).
  queue: {
    keeps: 'adapter',
    calls:
      'none to change an admitted prompt; the adapter keeps what is queued while a turn runs, edits, moves, promotes (a V2 `delivery: "steer"`) and holds it itself, and hands it over as one V2 `delivery: "queue"` prompt when the turn ends',
    evidence: `e2e/opencode-queue-verbs#queue three, edit the second, move the third first, pause: the turn ends and nothing goes; resumed, the next turn has them in the new order`,
  },
  // D33: the server stops a turn (`POST /api/session/:id/interrupt`, V1 `abort` where missing).
  cancel: {
    by: ['serve'],
    how: 'host the session on `opencode serve` and start the adapter with `--serve URL`',
    enable: 'start its adapter with AEP_INSTRUCT=1 and `--serve URL` of the `opencode serve` server',
    leaves: 'instructions queued with the adapter stay queued; they go at the end of the next turn',
    evidence: `${E2E}#cancel stops the turn and what waits stays queued`,
  },
  moments: {
    'aep.session.seen': { role: 'observe', starts: true, reason: NO_REPLY, evidence: OBSERVED },
    'session.created': observe(),
    'aep.turn.started': observe(`${E2E}#steer lands in the same turn's next request, with the server's receipt`),
    'aep.turn.ended': observe(`${E2E}#queue lands in the first request of the next turn, never in the running one`),
    'session.next.tool.called': observe(),
    'session.next.tool.success': observe(),
    'session.next.tool.failed': observe(),
    'session.next.step.failed': observe(),
    'session.next.compaction.ended': observe(),
    'permission.v2.asked': observe(),
    'permission.v2.replied': observe(),
    'session.deleted': { role: 'end', reason: () => 'normal', evidence: OBSERVED },
  },
  replies: {
    neutral: undefined,
    context: () => undefined,
    noUserNotice: {
      why: 'opencode 1.18.33 has no command hooks, so there is no reply to carry a notice; the attached TUI shows a started turn by its prompt',
      evidence: 'copilot-opencode-observed §2',
    },
  },
  maps,
  fallback: mechanicalFallback(TOKEN),
  cli: { bin: 'opencode', install: 'npm install -g opencode-ai@1.18.33' },
};
