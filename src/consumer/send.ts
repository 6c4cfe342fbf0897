// Sending steering commands as a consumer and settling them on the stream (design record,
// "Consumer behavior"): an instruction (`x.{vendor}.control.instruct`) followed to delivered or
// dropped, and an answer to a held request (`control.attention.respond`) followed to
// `attention.answered`. Routing is checked on the roster first; nothing is inferred from local
// state. The CLI, the demo, the MCP server and the console all send through here.
import { createHash } from 'node:crypto';
import type { AepEvent, CaptureLevel } from '../protocol/envelope.js';
import { command as buildCommand } from '../protocol/build.js';
import {
  deliveredType,
  droppedType,
  GRANT_ATTR,
  inputSentType,
  instructType,
  sendInputType,
  WITHDRAW_GRANT,
  withdrawType,
} from '../protocol/types.js';
import { acceptsType } from '../relay/routing.js';
import type { RelayConsumer } from './connection.js';
import { senderOf } from './connect.js';
import { acceptsOf, routeOf } from './roster.js';
import { sendAndFollow } from './settle.js';

/** Who the commands name as their sender (`agent` of the command, AEP-0004 §2). */
export interface Sender {
  sender: string;
}

/** How a steering verb ends when it does not settle its own way (instruct, withdraw, cancel). */
export type Unsettled =
  /** The session's actor decided against it: its ack says why. */
  | {
      outcome: 'rejected';
      command: string;
      session: string;
      vendor: string;
      ack: string;
      reason: string;
      code?: string;
      detail?: string;
    }
  /** Not sent, or not routed: the roster or the relay said no before any session decided. */
  | {
      outcome: 'refused';
      command?: string;
      session: string;
      vendor?: string;
      code: string;
      detail?: string;
      by: 'relay' | 'roster';
      /** The claimant does not declare the steering verbs (D5): its adapter runs with steering off. */
      steeringOff?: boolean;
    }
  | {
      outcome: 'timeout';
      command: string;
      session: string;
      vendor: string;
      stage: 'ack' | 'delivery';
      ack?: string;
      sent: number;
    }
  | { outcome: 'unreachable'; session: string; detail: string };

export type InstructOutcome =
  | {
      outcome: 'delivered';
      command: string;
      session: string;
      vendor: string;
      ack: string;
      delivered: string;
      queuedMs?: number;
      at?: string;
      moment?: string;
      delivery?: string;
    }
  | {
      outcome: 'dropped';
      command: string;
      session: string;
      vendor: string;
      ack: string;
      dropped: string;
      reason?: string;
      at?: string;
    }
  | { outcome: 'accepted'; command: string; session: string; vendor: string; ack: string }
  | Unsettled;

export interface InstructRequest {
  session: string;
  text: string;
  vendor?: string;
  /** D31: `moment` (the default), `steer` or `queue`; absent sends none. */
  delivery?: string;
  noWait?: boolean;
  /**
   * A caller-chosen command id (see `commandIdFor`): a second send with it is a retry of the
   * same command, deduped by the adapter (D4), and settles from the session's history.
   */
  id?: string;
  /** Whole local wait, ack and delivery together. */
  timeoutMs: number;
  /** Ack window per attempt (AEP-0004 §3 default 10 s); a retry resends the same command. */
  ackWindowMs?: number;
  retries?: number;
  /**
   * Called once the ack arrived, before waiting for the delivery, with what the roster said just
   * before sending: the instructions already queued ahead of this one, and whether the session
   * had ended (a resume window keeps its queue, D25).
   */
  onAccepted?: (info: { command: string; ack: AepEvent; ahead?: number; ended?: boolean }) => void;
  /** Called with the command id just before it is sent. */
  onSending?: (info: { command: string; type: string; vendor: string }) => void;
}

/**
 * A stable command id for an idempotency key: the same sender, session and key always give the
 * same id, so a repeated call is a retry of one command rather than a second instruction.
 */
export function commandIdFor(sender: string, session: string, key: string): string {
  return `idem-${createHash('sha256').update(`${sender}\n${session}\n${key}`).digest('hex').slice(0, 32)}`;
}

/** One steering verb as the core sends it: its command type, hint, payload and settling events. */
interface Verb {
  type: (vendor: string) => string;
  /** Why a claimant may not declare the verb, said after "does not declare …". */
  hint: string;
  /** The verb is one of the steering verbs that D5's opt-in switches on. */
  steering?: boolean;
  data: Record<string, unknown>;
  /** The events caused by the command that settle it, and which of them mean it arrived. */
  settles: RegExp;
  success: RegExp;
  /** The command's capture; instruction text makes it `redacted` (the default). */
  capture?: CaptureLevel;
  /** The run the command is about (control.cancel). */
  run?: string;
  /** Extension attributes of the command (a withdraw's grant, D32). */
  extensions?: Record<string, string>;
  /**
   * The event types that settle it, where a later command can end it naming it as `subject` (a
   * withdraw's drop, D32): the sender then follows those types on the session, not only its own
   * `cause`, on one subscription.
   */
  endTypes?: (vendor: string) => string[];
  /** What the verb's outcome also carries from the event that delivered it. */
  read?: (data: Record<string, unknown>) => Record<string, unknown>;
}

async function steer(consumer: RelayConsumer, f: Sender, req: InstructRequest, verb: Verb): Promise<InstructOutcome> {
  const session = req.session;
  const found = await routeOf(consumer, session, req.vendor);
  if ('code' in found)
    return {
      outcome: 'refused',
      session,
      code: found.code,
      detail: found.detail,
      by: 'roster',
      ...(req.vendor || found.vendor ? { vendor: req.vendor ?? found.vendor } : {}),
    };
  const vendor = req.vendor ?? found.entry.agent;
  if (vendor === undefined)
    return {
      outcome: 'refused',
      session,
      code: 'unsupported',
      detail: 'the claimant names no agent; give --vendor',
      by: 'roster',
    };
  const type = verb.type(vendor);
  const accepts = acceptsOf(found.entry);
  if (accepts === undefined || !acceptsType(accepts, type)) {
    const who = `${found.entry.agent ?? 'the claimant'}${found.entry.instance ? ` (${found.entry.instance})` : ''}`;
    return {
      outcome: 'refused',
      session,
      vendor,
      code: 'unsupported',
      by: 'roster',
      detail: `${who} does not declare ${type}: ${verb.hint}`,
      ...(verb.steering ? { steeringOff: true } : {}),
    };
  }

  // Instruction text is redacted-class: the command says so (design record; aep-wire §2.2).
  const cmd = buildCommand({ agent: senderOf(consumer, f) }, session, {
    type,
    data: verb.data,
    capture: verb.capture ?? 'redacted',
    ...(req.id ? { id: req.id } : {}),
    ...(verb.run ? { run: verb.run } : {}),
    ...(verb.extensions ? { extensions: verb.extensions } : {}),
  });
  const {
    settlement,
    retries,
    terminal: t,
  } = await sendAndFollow(consumer, cmd, {
    filter: verb.endTypes ? { session, type: verb.endTypes(vendor) } : { session, cause: cmd.id },
    // A caller-chosen id may have settled before: read the session's history for it too.
    ...(req.id ? { from: [{ session }] } : {}),
    settles: (e) => verb.settles.test(e.type),
    timeoutMs: req.timeoutMs,
    ackWindowMs: req.ackWindowMs,
    retries: req.retries,
    beforeSend: () => req.onSending?.({ command: cmd.id, type, vendor }),
    afterAck: (ack) => {
      const { queued, state } = found.entry;
      req.onAccepted?.({
        command: cmd.id,
        ack,
        ...(typeof queued === 'number' ? { ahead: queued } : {}),
        ...(state === 'ended' ? { ended: true } : {}),
      });
      return !req.noWait;
    },
  });
  const base = { command: cmd.id, session, vendor };
  switch (settlement.outcome) {
    case 'timeout':
      return { ...base, outcome: 'timeout', stage: 'ack', sent: retries + 1 };
    case 'refused':
      return {
        ...base,
        outcome: 'refused',
        code: settlement.code,
        by: 'relay',
        ...(settlement.detail ? { detail: settlement.detail } : {}),
      };
    case 'rejected':
      return {
        ...base,
        outcome: 'rejected',
        ack: settlement.ack.id,
        reason: settlement.reason,
        ...codeOf(settlement),
        ...detailOf(settlement),
      };
    case 'accepted':
      break;
  }
  const ack = settlement.ack.id;
  if (req.noWait) return { ...base, outcome: 'accepted', ack };
  if (!t) return { ...base, outcome: 'timeout', stage: 'delivery', ack, sent: 1 };
  const data = t.data ?? {};
  if (verb.success.test(t.type)) {
    return {
      ...base,
      outcome: 'delivered',
      ack,
      delivered: t.id,
      at: t.time,
      ...(typeof data['queued_ms'] === 'number' ? { queuedMs: data['queued_ms'] } : {}),
      ...(typeof data['moment'] === 'string' ? { moment: data['moment'] } : {}),
      ...(typeof data['delivery'] === 'string' ? { delivery: data['delivery'] } : {}),
      ...verb.read?.(data),
    };
  }
  return {
    ...base,
    outcome: 'dropped',
    ack,
    dropped: t.id,
    at: t.time,
    ...(typeof data['reason'] === 'string' ? { reason: data['reason'] } : {}),
  };
}

/** The rejection's stable code (README "Errors") and its sentence, when the adapter sent them. */
const codeOf = (s: { code?: string }): { code?: string } => (s.code === undefined ? {} : { code: s.code });
const detailOf = (s: { detail?: string }): { detail?: string } => (s.detail ? { detail: s.detail } : {});

/** Sends one instruction on an open consumer connection and settles it on the stream. */
export function sendInstruction(consumer: RelayConsumer, f: Sender, req: InstructRequest): Promise<InstructOutcome> {
  return steer(consumer, f, req, {
    type: instructType,
    hint: 'its adapter runs with steering off (steering is opt-in)',
    steering: true,
    data: { text: req.text, ...(req.delivery ? { delivery: req.delivery } : {}) },
    settles: /\.instruction\.(delivered|dropped)$/,
    success: /\.instruction\.delivered$/,
    endTypes: (v) => [deliveredType(v), droppedType(v)],
  });
}

export type InputDelivery = 'queue' | 'steer';

export type WithdrawOutcome =
  /** D32: the instruction was taken back; `dropped` is its `instruction.dropped {reason: withdrawn}`. */
  | {
      outcome: 'withdrawn';
      command: string;
      session: string;
      vendor: string;
      instruction: string;
      ack: string;
      dropped: string;
    }
  | (Unsettled & { instruction: string });

/**
 * D32: takes back an instruction that still waits (`x.{vendor}.control.withdraw`), settled by
 * its `instruction.dropped {reason: withdrawn}`. With `id`, a second call is a retry of the same
 * withdraw and gets the same answer (D4). `granted` claims the token's withdraw grant, for an
 * instruction someone else sent; the relay refuses the claim from a token without one.
 */
export async function sendWithdraw(
  consumer: RelayConsumer,
  f: Sender,
  req: {
    session: string;
    instruction: string;
    vendor?: string;
    id?: string;
    granted?: boolean;
    timeoutMs: number;
    ackWindowMs?: number;
  },
): Promise<WithdrawOutcome> {
  const o = await steer(
    consumer,
    f,
    {
      session: req.session,
      text: '',
      timeoutMs: req.timeoutMs,
      ...(req.vendor ? { vendor: req.vendor } : {}),
      ...(req.id ? { id: req.id } : {}),
      ...(req.ackWindowMs === undefined ? {} : { ackWindowMs: req.ackWindowMs }),
    },
    {
      type: withdrawType,
      hint: 'withdraw comes with instruct, and its adapter runs with steering off',
      steering: true,
      data: { instruction: req.instruction },
      ...(req.granted ? { extensions: { [GRANT_ATTR]: WITHDRAW_GRANT } } : {}),
      settles: /\.instruction\.dropped$/,
      success: /\.instruction\.dropped$/,
      capture: 'metadata',
    },
  );
  const instruction = req.instruction;
  switch (o.outcome) {
    case 'delivered':
      return {
        outcome: 'withdrawn',
        command: o.command,
        session: o.session,
        vendor: o.vendor,
        instruction,
        ack: o.ack,
        dropped: o.delivered,
      };
    case 'dropped':
    case 'accepted':
      // The success pattern matches every drop and noWait is never set: neither reaches here.
      return {
        outcome: 'timeout',
        command: o.command,
        session: o.session,
        vendor: o.vendor,
        instruction,
        stage: 'delivery',
        ack: o.ack,
        sent: 1,
      };
    default:
      return { ...o, instruction };
  }
}

/**
 * Sends user-plane input (`x.{vendor}.control.send_input`, D28–D29) to a session whose adapter
 * drives the vendor's own input API (Cline, OpenHands), settled by `x.{vendor}.input.sent`
 * (reported as `delivered`) or `x.{vendor}.instruction.dropped` (the session machine's drop:
 * `send-failed`, `session-ended`, `delivery-unknown`).
 */
export function sendInput(
  consumer: RelayConsumer,
  f: Sender,
  req: InstructRequest & { delivery?: InputDelivery },
): Promise<InstructOutcome> {
  return steer(consumer, f, req, {
    type: sendInputType,
    hint: "send_input is for sessions whose adapter drives the vendor's input API (Cline, OpenHands) with its control switched on",
    data: { text: req.text, ...(req.delivery ? { delivery: req.delivery } : {}) },
    settles: /\.(input\.sent|instruction\.dropped)$/,
    success: /\.input\.sent$/,
    endTypes: (v) => [inputSentType(v), droppedType(v)],
  });
}

export const RESPOND_TYPE = 'control.attention.respond';

export interface Answer {
  option?: string;
  text?: string;
  values?: Record<string, unknown>;
}

/** Free text and form values may carry words: they travel at redacted; a bare option id is metadata (aep-wire §2.2). */
export const captureFor = (a: Answer): CaptureLevel =>
  a.text !== undefined || a.values !== undefined ? 'redacted' : 'metadata';

export type RespondOutcome =
  | {
      outcome: 'answered';
      command: string;
      session: string;
      request: string;
      ack: string;
      answered: string;
      answer?: unknown;
    }
  /** `code`: the adapter's rule id (`not-pending`, `unknown-request`, `answer-invalid`, …) when it sent one. */
  | {
      outcome: 'rejected';
      command: string;
      session: string;
      request: string;
      ack: string;
      reason: string;
      detail?: string;
      code?: string;
    }
  | {
      outcome: 'refused';
      command?: string;
      session: string;
      request: string;
      code: string;
      detail?: string;
      by: 'relay' | 'roster';
    }
  | { outcome: 'timeout'; command: string; session: string; request: string; stage: 'ack' | 'answer'; ack?: string }
  | { outcome: 'unreachable'; session: string; request: string; detail: string };

export async function sendResponse(
  consumer: RelayConsumer,
  f: Sender,
  req: { session: string; request: string; answer: Answer; timeoutMs: number; ackWindowMs?: number },
): Promise<RespondOutcome> {
  const { session, request } = req;
  const found = await routeOf(consumer, session);
  if ('code' in found)
    return { outcome: 'refused', session, request, code: found.code, detail: found.detail, by: 'roster' };
  if (!acceptsOf(found.entry)?.includes(RESPOND_TYPE)) {
    return {
      outcome: 'refused',
      session,
      request,
      code: 'unsupported',
      by: 'roster',
      detail: `${found.entry.agent ?? 'the claimant'} does not declare ${RESPOND_TYPE}`,
    };
  }
  // subject and cause both name the request (AEP-0004 §2, golden respond command).
  const cmd = buildCommand({ agent: senderOf(consumer, f) }, session, {
    type: RESPOND_TYPE,
    subject: request,
    cause: request,
    data: { answer: req.answer },
    capture: captureFor(req.answer),
  });
  const { settlement, terminal: a } = await sendAndFollow(consumer, cmd, {
    filter: { session, cause: cmd.id, type: 'attention.answered' },
    settles: (e) => e.type === 'attention.answered',
    timeoutMs: req.timeoutMs,
    ackWindowMs: req.ackWindowMs,
  });
  const base = { command: cmd.id, session, request };
  if (settlement.outcome === 'timeout') return { ...base, outcome: 'timeout', stage: 'ack' };
  if (settlement.outcome === 'refused')
    return {
      ...base,
      outcome: 'refused',
      code: settlement.code,
      by: 'relay',
      ...(settlement.detail ? { detail: settlement.detail } : {}),
    };
  if (settlement.outcome === 'rejected')
    return {
      ...base,
      outcome: 'rejected',
      ack: settlement.ack.id,
      reason: settlement.reason,
      ...codeOf(settlement),
      ...detailOf(settlement),
    };
  if (!a) return { ...base, outcome: 'timeout', stage: 'answer', ack: settlement.ack.id };
  return {
    ...base,
    outcome: 'answered',
    ack: settlement.ack.id,
    answered: a.id,
    ...(a.data?.['answer'] !== undefined ? { answer: a.data['answer'] } : {}),
  };
}

export interface EditOutcome {
  withdraw: WithdrawOutcome;
  /** The replacement, sent only once the withdraw took the old text back. */
  sent?: InstructOutcome;
}

/**
 * D32: editing is withdraw plus a new instruct, one action. A withdraw that loses the race (the
 * agent has the old text) sends nothing, so the agent never reads both.
 */
export async function editInstruction(
  consumer: RelayConsumer,
  f: Sender,
  req: { session: string; instruction: string; text: string; delivery?: string; timeoutMs: number; noWait?: boolean },
): Promise<EditOutcome> {
  const withdraw = await sendWithdraw(consumer, f, {
    session: req.session,
    instruction: req.instruction,
    timeoutMs: req.timeoutMs,
  });
  if (withdraw.outcome !== 'withdrawn') return { withdraw };
  const sent = await sendInstruction(consumer, f, {
    session: req.session,
    text: req.text,
    timeoutMs: req.timeoutMs,
    ...(req.delivery ? { delivery: req.delivery } : {}),
    ...(req.noWait ? { noWait: true } : {}),
  });
  return { withdraw, sent };
}

/** D33: a tool process (a shell command) the agent's turn ran, as `run.cancelled` names it. */
export interface ToolProcessSaid {
  pid?: number;
  /** Absent where the sender's capture ceiling hides command lines (they are redacted-class). */
  command?: string;
}

export type CancelOutcome =
  /**
   * D33: the agent stopped the turn; `cancelled` is its `run.cancelled {by: control}`, with the
   * tool processes the vendor left running (`leftRunning`) or the lane ended on `killTools`.
   */
  | {
      outcome: 'cancelled';
      command: string;
      session: string;
      vendor: string;
      ack: string;
      cancelled: string;
      leftRunning?: ToolProcessSaid[];
      killed?: ToolProcessSaid[];
    }
  | Unsettled;

const toolsSaid = (v: unknown): ToolProcessSaid[] | undefined => {
  if (!Array.isArray(v) || v.length === 0) return undefined;
  return v.map((t: { pid?: unknown; command?: unknown }) => ({
    ...(typeof t?.pid === 'number' ? { pid: t.pid } : {}),
    ...(typeof t?.command === 'string' ? { command: t.command } : {}),
  }));
};

/** D33: `control.cancel {scope: "run"}`, settled by the `run.cancelled` the agent's end of the turn brings. */
export async function sendCancel(
  consumer: RelayConsumer,
  f: Sender,
  req: { session: string; run?: string; timeoutMs: number; ackWindowMs?: number; killTools?: boolean },
): Promise<CancelOutcome> {
  const o = await steer(
    consumer,
    f,
    {
      session: req.session,
      text: '',
      timeoutMs: req.timeoutMs,
      ...(req.ackWindowMs === undefined ? {} : { ackWindowMs: req.ackWindowMs }),
    },
    {
      type: () => 'control.cancel',
      hint: 'only a session reached by a way in that can stop a running turn takes it (a native lane or hub, not hooks alone)',
      // D33 `kill_tools`: the lane also ends the tool processes the vendor would leave running.
      data: { scope: 'run', ...(req.killTools === true ? { kill_tools: true } : {}) },
      settles: /^run\.cancelled$/,
      success: /^run\.cancelled$/,
      capture: 'metadata',
      read: (data) => {
        const left = toolsSaid(data['left_running']);
        const killed = toolsSaid(data['killed']);
        return { ...(left ? { leftRunning: left } : {}), ...(killed ? { killed } : {}) };
      },
      ...(req.run ? { run: req.run } : {}),
    },
  );
  switch (o.outcome) {
    case 'delivered': {
      // What `read` took from the run.cancelled.
      const { leftRunning, killed } = o as { leftRunning?: ToolProcessSaid[]; killed?: ToolProcessSaid[] };
      return {
        outcome: 'cancelled',
        command: o.command,
        session: o.session,
        vendor: o.vendor,
        ack: o.ack,
        cancelled: o.delivered,
        ...(leftRunning ? { leftRunning } : {}),
        ...(killed ? { killed } : {}),
      };
    }
    case 'dropped':
    case 'accepted':
      return {
        outcome: 'timeout',
        command: o.command,
        session: o.session,
        vendor: o.vendor,
        stage: 'delivery',
        ack: o.ack,
        sent: 1,
      };
    default:
      return o;
  }
}
