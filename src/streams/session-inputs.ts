// What an arrival becomes for the session machine: a classified hook or a routed command turned
// into the session input (with the ids a step mints: request and answer ids), and the D37
// description a hook may add. Pure functions of the arrival and what the session holds.
import {
  newId,
  withdrawType,
  describedType,
  type AepCommand,
  type EventFields,
  type Rejection,
} from '../protocol/index.js';
import type { SessionContext } from '../machines/session-context.js';
import type { SessionInput } from '../machines/session-input.js';
import type { SessionItem } from './step-types.js';
import type { SessionAbout, VendorSurface } from './surface.js';
import { laneCancel, type LaneHostOptions } from './lane-host.js';

import type { LaneStarts, QueueVerb } from '../machines/command-inputs.js';
import { queueVerbType } from '../protocol/types.js';

const QUEUE_VERBS: readonly QueueVerb[] = ['edit', 'move', 'promote', 'hold'];

/** The gates a command passes through (D5, D28) and the vendor checks it meets. */
export interface CommandGates {
  /** AEP_INSTRUCT (D5). */
  instruct: boolean;
  /** The vendor's send_input gate (e.g. AEP_CLINE_HUB_CONTROL); off when absent. */
  sendInput?: boolean;
  /** Whether the send_input transport is connected right now. */
  inputReady?: () => boolean;
  /** The vendor's control gate for the surface's `controls` (e.g. AEP_OPENHANDS_CONTROL). */
  control?: boolean;
  /** The vendor's guard for a forwarded command, from what the stream last showed. */
  controlCheck?: (session: string, command: AepCommand) => Rejection | undefined;
  /** D30: what the attached native lanes add (D30–D33); absent: the hook lane only. */
  lanes?: LaneHostOptions;
  /** D43: the lanes that can start a turn, and how a session gets one; absent: none can. */
  starts?: LaneStarts;
}

/** D37: what this process has described of a session. */
export interface Described {
  cwd?: string;
  titled: boolean;
}

/** D37: a title is the first non-blank line of the first prompt, at most 120 characters. */
function titleOf(prompt: string | undefined): string | undefined {
  const line = prompt
    ?.split('\n')
    .map((l) => l.trim())
    .find((l) => l !== '');
  return line === undefined ? undefined : line.length > 120 ? `${line.slice(0, 119)}…` : line;
}

/**
 * D37: `x.{vendor}.session.described` when a session is first seen by this process, when its
 * working directory changes, and once with its title (the first prompt's first line; the
 * event is then at capture redacted, so a metadata watcher never gets the title).
 */
export function description(
  known: Described | undefined,
  about: SessionAbout | undefined,
  surface: Pick<VendorSurface, 'token' | 'staleAfterMs'>,
  lanes?: string[],
  startable?: boolean,
): { fields: EventFields; described: Described } | undefined {
  const cwd = about?.cwd ?? known?.cwd;
  const title = known?.titled === true ? undefined : titleOf(about?.prompt);
  if (known !== undefined && cwd === known.cwd && title === undefined) return undefined;
  // Only what the hook input said: a bridge vendor (no `about`) is described by its own events,
  // and once, on first sight, where it can be started (D43), so the roster can say so.
  if (cwd === undefined && title === undefined && (known !== undefined || startable !== true)) return undefined;
  const described: Described = {
    ...(cwd === undefined ? {} : { cwd }),
    titled: known?.titled === true || title !== undefined,
  };
  const data: Record<string, unknown> = {};
  if (cwd !== undefined) data.cwd = cwd;
  if (title !== undefined) data.title = title;
  if (surface.staleAfterMs !== undefined) data.stale_after_ms = surface.staleAfterMs;
  if (lanes !== undefined) data.lanes = lanes;
  if (startable !== undefined) data.startable = startable;
  const capture = title === undefined ? 'metadata' : 'redacted';
  return { fields: { type: describedType(surface.token), data, capture }, described };
}

export function hookInput(
  item: Extract<SessionItem, { kind: 'hook' }>,
  ctx: SessionContext | undefined,
  times: { windowMs: number; attentionTimeoutMs: number },
  causeId: string | undefined,
  runId?: string,
): SessionInput {
  const base = { at: item.at, hookId: item.hookId, ...(causeId === undefined ? {} : { causeId }) };
  const c = item.hook.class;
  if (c.kind === 'end') {
    const { windowMs } = times;
    return { type: 'hook.end', ...base, reason: c.reason, ...(windowMs > 0 ? { windowMs } : {}) };
  }
  if (c.kind === 'held') {
    return {
      type: 'hook.held',
      ...base,
      requestId: newId(item.at),
      hold: c.hold,
      request: c.request,
      timeoutMs: times.attentionTimeoutMs,
      ...(c.call === undefined ? {} : { call: c.call }),
    };
  }
  const turn = c.turn ?? item.hook.bounds;
  // D34: only a moment that reports a call some request of this session holds mints an answer id.
  const ran =
    c.ran !== undefined && ctx?.holds.some((h) => h.call === c.ran) === true
      ? { ran: { call: c.ran, answeredId: newId(item.at) } }
      : {};
  return {
    type: 'hook.moment',
    ...base,
    eligible: c.eligible,
    moment: item.hook.event,
    ...(c.starts === true ? { starts: true } : {}),
    ...(turn === undefined ? {} : { turn }),
    ...(runId === undefined ? {} : { runId }),
    ...ran,
    ...(item.hook.echo === undefined ? {} : { echo: item.hook.echo }),
    ...(item.hook.opener === undefined ? {} : { opener: item.hook.opener }),
    ...(item.answered === undefined ? {} : { answered: true }),
  };
}

export function commandInput(
  item: Extract<SessionItem, { kind: 'command' }>,
  surface: VendorSurface,
  gates: CommandGates,
  ctx?: SessionContext,
): SessionInput {
  const c = item.command;
  const laned = laneCancel(c, item.at, ctx, gates.lanes, gates.instruct, surface.cancels === true);
  if (laned !== undefined) return laned;
  if (surface.controls?.includes(c.type) === true) {
    const gateOpen = gates.control === true;
    const refusal = gateOpen ? gates.controlCheck?.(item.session, c) : undefined;
    return {
      type: 'command.forward',
      at: item.at,
      command: c,
      gateOpen,
      ...(refusal === undefined ? {} : { refusal }),
    };
  }
  if (c.type === 'control.attention.respond')
    return { type: 'command.respond', at: item.at, command: c, answeredId: newId(item.at) };
  // A cancel and a send_input go through the vendor's user-plane channel: its gate, and whether it is up.
  const userPlane = () => ({
    at: item.at,
    command: c,
    gateOpen: gates.sendInput === true,
    ready: gates.inputReady?.() ?? false,
  });
  if (c.type === 'control.cancel' && surface.cancels === true) return { type: 'command.cancel', ...userPlane() };
  const input = surface.sendInput;
  if (input !== undefined && c.type === input.type)
    return { type: 'command.send_input', ...userPlane(), policy: input.policy };
  // Any other command reaching a session is the steering verb or one this adapter does not
  // take; the gate answers both (D5: only the surface's verb can pass).
  if (c.type === withdrawType(surface.token)) {
    // What it takes back came in through instruct or, where the table lets the queue give inputs back, send_input.
    const takesBackInputs = surface.withdrawsInputs === true && gates.sendInput === true;
    return {
      type: 'command.withdraw',
      at: item.at,
      command: c,
      gateOpen: gates.instruct || takesBackInputs,
      ...(takesBackInputs ? { takesBackInputs } : {}),
      ...(gates.lanes === undefined ? {} : { laneWithdraws: gates.lanes.withdraws }),
    };
  }
  const verb = QUEUE_VERBS.find((v) => c.type === queueVerbType(surface.token, v));
  // D44: the queue verbs carry instruct's gate and lane facts (a promote may hand it to a lane).
  if (verb !== undefined)
    return {
      type: 'command.queue',
      verb,
      at: item.at,
      command: c,
      gateOpen: gates.instruct,
      ...(surface.deliveries === undefined ? {} : { deliveries: surface.deliveries }),
      ...(gates.lanes === undefined ? {} : { native: gates.lanes.native }),
      ...(gates.starts === undefined ? {} : { starts: gates.starts }),
      ...(surface.startType === undefined ? {} : { startOnly: true as const }),
    };
  return {
    type: 'command.instruct',
    at: item.at,
    command: c,
    gateOpen: gates.instruct && (c.type === surface.steeringType || c.type === surface.startType),
    ...(c.type === surface.startType ? { startOnly: true as const } : {}),
    ...(surface.deliveries === undefined ? {} : { deliveries: surface.deliveries }),
    ...(gates.lanes === undefined ? {} : { native: gates.lanes.native }),
    ...(gates.starts === undefined ? {} : { starts: gates.starts }),
  };
}
