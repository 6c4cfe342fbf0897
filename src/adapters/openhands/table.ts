// OpenHands agent server (software-agent-sdk v1.36.1 source, plus the v1.37 `parent_id` change)
// as a table. The agent server cannot run here (Python, pydantic v2, no PyPI), so every row is
// design-derived: it rests on openhands-agent-server.md and is proven against the stand-in agent
// server written from that contract (test/support/openhands-server.ts), as the VS Code and Hermes
// rows rest on their design records. There is no hook and no reply: the bridge observes the
// server's event WebSocket (openhands/receiver.ts frames each event with what only it knows) and
// steers on the user plane, `x.openhands.control.send_input` over REST (D29), never `instruct`.
import { str } from '../hook-input.js';
import { TOKEN, mapFrame, statusOf, type OpenHandsFrame } from './map.js';
import { AgentServer } from './agent-server.js';
import { CONTROLS, openHandsLane } from './control.js';
import { openhandsOptions } from './options.js';
import { startReceiver } from './receiver.js';
import type { HookInput, MapRule, MomentRow, SourceSpec, VendorTable } from '../table.js';

const OBSERVE = 'openhands-agent-server §2.3';

/** The end moment's event name: a status flip into `deleting` (the conversation and its history go). */
export const DELETING = 'execution_status.deleting';

const frameOf = (input: HookInput): OpenHandsFrame => input as unknown as OpenHandsFrame;

/** `ConversationStateUpdateEvent` into `deleting` is the end; every other event is named by its kind. */
function eventName(f: OpenHandsFrame): string | undefined {
  const kind = str(f.event?.kind);
  if (kind === undefined) return undefined;
  return statusOf(f.event) === 'deleting' && f.status_before !== 'deleting' ? DELETING : kind;
}

const observe = (reason: string): MomentRow => ({ role: 'observe', reason, evidence: OBSERVE });
const NO_REPLY = 'a socket event: OpenHands reads no reply';

/** The members of the event union at the pin (design record, what the agent server exposes). */
const KINDS = [
  'MessageEvent',
  'ActionEvent',
  'ObservationEvent',
  'UserRejectObservation',
  'AgentErrorEvent',
  'SystemPromptEvent',
  'Condensation',
  'CondensationRequest',
  'CondensationSummaryEvent',
  'ConversationStateUpdateEvent',
  'ConversationErrorEvent',
  'PauseEvent',
  'InterruptEvent',
  'StreamingDeltaEvent',
  'TokenEvent',
  'HookExecutionEvent',
  'ACPToolCallEvent',
  'LLMCompletionLogEvent',
];

const frameRule: MapRule = (input) => mapFrame(frameOf(input));

/** The agent server (uvicorn, default port 8000), polled for conversations, one socket each. */
const source: SourceSpec = {
  start(opts) {
    const server = new AgentServer({ url: opts.url, ...(opts.key === undefined ? {} : { key: opts.key }) });
    const receiver = startReceiver({
      server,
      pollMs: opts.pollMs,
      deltas: opts.deltas,
      answerable: opts.control,
      history: opts.history,
      onError: opts.onError,
    });
    return {
      arrivals$: receiver.arrivals$,
      ...(opts.control ? { lane: openHandsLane(server, receiver) } : {}),
      health: () => ({ source: receiver.health() }),
      close: () => receiver.close(),
    };
  },
};

export const openhands: VendorTable = {
  token: TOKEN,
  version: '1.36.1',
  steering: 'send_input',
  port: 8397, // D15: the bridge's own endpoints (healthz)
  attentionTimeoutMs: 55_000,
  identify: (input) => {
    const f = frameOf(input);
    const session = str(f.conversation_id);
    const event = typeof f.event === 'object' && f.event !== null ? eventName(f) : undefined;
    return session === undefined || event === undefined ? undefined : { session, event };
  },
  // Events are scoped to the conversation; sub-conversations have their own ids and sockets.
  subagent: () => false,
  unlistedReason: NO_REPLY,
  moments: {
    ...Object.fromEntries(KINDS.map((k) => [k, observe(NO_REPLY)])),
    // Deleting ends the session (session.ended reason `killed`, fixture status_transitions).
    [DELETING]: { role: 'end', reason: () => 'killed', evidence: OBSERVE },
  },
  replies: {
    // Nothing is ever written back on the socket but the auth frame.
    neutral: undefined,
    context: () => undefined,
    noUserNotice: {
      why: 'the agent server is observed over its event socket and answers no hook: there is no reply to carry a notice',
      evidence: 'openhands-agent-server.md',
    },
  },
  maps: {},
  fallback: frameRule,
  source,
  // Its server (options.ts), and the one gate for the five writes (D29): it mints no permission
  // the key did not already carry.
  options: openhandsOptions,
  // One append plane, no delivery choice, no idle refusal: the append lands in every status with
  // run:false, and what the server does with it is observed (D29).
  sendInput: { deliveries: [], refuseIdle: false, reportsConsumption: false, mergesIdentical: false },
  controls: CONTROLS,
  // D43: with the control gate on, instruct with idle start begins a turn (the append with run true).
  instructStarts: true,
  // D44: no queue. The append (run false) is no queue the vendor keeps: a running loop reads it at
  // its next step, an idle conversation keeps it as history for the next run, and no route edits,
  // reorders or removes an event; instruct only starts a turn, so nothing waits here either.
  queue: {
    keeps: 'none',
    calls: 'none: POST /api/conversations/{id}/events appends to the history at once; the queue verbs answer no-queue',
    evidence: 'openhands-agent-server §2.2',
  },
};
