// What a sender does next after a refusal, said in the words of the consumer that shows it: the
// CLI names its own commands, MCP its own tools, the console its own page. One table of codes,
// three voices, so every consumer gives the same advice and none names another's way of doing it.

/** The ways of doing things that a consumer can point to. */
export interface Voice {
  /** Where the live sessions are listed, as a clause ("`aep-steer sessions` lists …"). */
  sessions: string;
  /** Where a session's events show how a command ended. */
  events: (session: string) => string;
  /** Where what waits in a session's queue shows. */
  queue: (session: string) => string;
  /** Where a session's held requests show. */
  pending: (session: string) => string;
  /** How the vendor of a command is chosen ("--vendor", "vendor"). */
  vendorChoice: string;
  /** The relay could not be reached. */
  relayDown: string;
  /** The relay refused the token this consumer used. */
  tokenRefused: string;
  /** The session's adapter is not connected. */
  adapterDown: (vendor: string | undefined) => string;
  /** The adapter runs, but its link to the agent's own channel (a hub, a server) is down. */
  channelDown: string;
  /** The session's adapter runs with steering off (D5). */
  steeringOff: (vendor: string | undefined) => string;
  /** How a later stop also ends the tool processes the agent leaves running (D33 `kill_tools`). */
  killTools: string;
}

const vendorOr = (vendor: string | undefined): string => vendor ?? '<vendor>';

export const CLI_VOICE: Voice = {
  sessions: '`aep-steer sessions` lists the live ones',
  events: (s) => `\`aep-steer watch --session ${s} --replay\` shows how it ended`,
  queue: (s) => `\`aep-steer queue --session ${s}\` lists what waits`,
  pending: (s) => `\`aep-steer pending --session ${s}\` lists what is still open`,
  vendorChoice: '--vendor',
  relayDown:
    'start it with `aep-steer up` (or point --relay / AEP_RELAY at the one that runs); `aep-steer doctor` checks the rest',
  tokenRefused:
    'give the token that relay issued (--token or AEP_TOKEN; on one machine the local token file is read); `aep-steer doctor` says which token was read',
  adapterDown: (v) => `start its adapter again with \`aep-steer up ${vendorOr(v)}\`, then send again`,
  channelDown:
    "its adapter runs but has not reached the agent's own channel (Cline's hub starts with the first `cline`); the adapter's log (`aep-steer status` names it) says `connected` once it has: send again then",
  steeringOff: (v) =>
    `restart its adapter with steering on: \`aep-steer down ${vendorOr(v)}\`, then \`aep-steer up ${vendorOr(v)} --instruct\``,
  killTools: 'end them yourself, or stop turns with `aep-steer cancel --kill-tools` to end them with the turn',
};

export const MCP_VOICE: Voice = {
  sessions: 'call list_sessions to see the live ones',
  events: () => 'call session_events to see how it ended',
  queue: () => 'call session_events to see what still waits',
  pending: () => 'call pending_requests to see what is still open',
  vendorChoice: 'a vendor',
  relayDown:
    'nothing was sent; tell the person who runs this MCP server that the relay it follows is down, and call again once it is back',
  tokenRefused: 'nothing was sent; tell the person who set up this MCP server that the relay refuses its token',
  adapterDown: () =>
    'nothing was sent; tell the person who runs that agent to start its adapter again, and call list_sessions to see when it is back',
  channelDown:
    "its adapter runs but has not reached the agent's own channel yet; call again in a moment, or tell the person who runs that agent to start it",
  steeringOff: () =>
    'its adapter does not take instructions; tell the person who runs it to restart the adapter with steering on',
  killTools:
    'call cancel with kill_tools: true next time to end them with the turn, or ask the person at that machine to end them',
};

export const CONSOLE_VOICE: Voice = {
  sessions: 'the session list shows the live ones',
  events: () => "the session's events show how it ended",
  queue: () => "the session's queue shows what waits",
  pending: () => 'the requests panel shows what is still open',
  vendorChoice: 'a vendor',
  relayDown: 'start it on its machine with `aep-steer up`; the page reconnects by itself',
  tokenRefused: 'open the console again from the URL `aep-steer console` printed',
  adapterDown: (v) => `start its adapter again (\`aep-steer up ${vendorOr(v)}\` on that machine), then send again`,
  channelDown:
    "its adapter runs but has not reached the agent's own channel yet (Cline's hub starts with the first `cline`); send again in a moment",
  steeringOff: (v) =>
    `restart its adapter with steering on (\`aep-steer up ${vendorOr(v)} --instruct\` on that machine)`,
  killTools:
    'end them on that machine, or stop turns with `aep-steer cancel --kill-tools`, which ends them with the turn',
};

/** What the sender knows of the command a refusal answers. */
export interface RefusalContext {
  session: string;
  vendor?: string;
  /** The relay's or adapter's own sentence. */
  detail?: string;
  /** The session's claimant does not declare the steering verbs: its adapter runs with steering off (D5). */
  steeringOff?: boolean;
}

/**
 * The next step for a refusal or rejection code (the relay's, the roster's or the adapter's rule,
 * docs/errors.md), in `voice`; undefined when the code's detail already says all there is.
 */
export function nextStep(code: string | undefined, voice: Voice, c: RefusalContext): string | undefined {
  switch (code) {
    case 'no-route':
    case 'unknown-session':
      return `no adapter claims session ${c.session} now: ${voice.sessions}`;
    case 'adapter-offline':
      return voice.adapterDown(c.vendor);
    case 'transport-down':
      return voice.channelDown;
    case 'vendor-mismatch':
      return `send it again without ${voice.vendorChoice}, or with the session's own vendor`;
    case 'ambiguous':
      return 'more than one adapter claims the session: stop the extra one, then send again';
    case 'gate-off':
      return voice.steeringOff(c.vendor);
    case 'unsupported':
      return c.steeringOff
        ? voice.steeringOff(c.vendor)
        : `this session does not take that command: ${voice.sessions} with what each one takes`;
    case 'unauthorized':
      return 'nothing was sent: the token in use may not send that; use a token that may';
    case 'store-unavailable':
      return 'the relay cannot write its store right now: send the same command again in a few seconds';
    case 'session-idle':
    case 'delivery-unsupported':
      // The adapter's detail names what the session takes instead: it is the advice.
      return undefined;
    case 'delivery-invalid':
      return 'the delivery must be moment, steer or queue';
    case 'idle-invalid':
      return 'idle must be refuse, wait or start';
    case 'start-unsupported':
    case 'start-only':
    case 'no-queue':
      // The adapter's detail says which way in could start the session.
      return undefined;
    case 'text-empty':
    case 'text-too-long':
    case 'text-not-string':
      return 'fix the text and send it again';
    case 'queue-full':
      return `wait for the queue to drain, or take one back: ${voice.queue(c.session)}`;
    case 'session-ended':
      return `the session is over: ${voice.sessions}`;
    case 'already-delivered':
      return 'the agent has it already: send a new instruction that corrects it';
    case 'not-waiting':
      return 'it no longer waits (withdrawn, expired, or its turn or session ended): nothing was changed';
    case 'unknown-instruction':
      return `the session has no instruction with that id: ${voice.queue(c.session)}`;
    case 'not-sender':
      return 'only its sender may take it back: ask them, or send a new instruction';
    case 'move-invalid':
      return 'name either the instruction to put it before, or the front or the back of the queue';
    case 'move-target-unknown':
      return `the instruction to put it before must wait in the same session: ${voice.queue(c.session)}`;
    case 'paused-invalid':
      return 'paused must be true (pause) or false (resume)';
    case 'no-active-run':
      return 'no turn is running, so there is nothing to stop';
    case 'cancel-pending':
      return `a cancel of this turn is already under way: ${voice.events(c.session)}`;
    case 'cancel-scope':
      return 'a cancel stops the running turn: send it with scope run';
    case 'cancel-refused':
    case 'vendor-refused':
      return `the agent's own side said no, so nothing changed: ${voice.events(c.session)}`;
    case 'lane-unreached':
      // The adapter's detail says which way in would reach the session.
      return undefined;
    case 'status-guard':
      return `the agent is not in a state to take it now: ${voice.events(c.session)}, then send again`;
    case 'input-pending-identical':
      return 'the same text already waits to be sent: nothing new was queued';
    case 'not-pending':
    case 'unknown-request':
      return `nothing was sent to the agent: ${voice.pending(c.session)}`;
    case 'answer-invalid':
      return `the answer does not fit the request: ${voice.pending(c.session)} with what each one accepts`;
    default:
      return undefined;
  }
}

/** "what happened: the detail; what next", one sentence without a trailing stop. */
export function refusalSentence(code: string | undefined, voice: Voice, c: RefusalContext): string {
  const next = nextStep(code, voice, c);
  const detail = c.detail ?? (next === undefined ? 'no detail was given' : undefined);
  if (detail === undefined) return next!;
  return next === undefined ? detail : `${detail}; ${next}`;
}
