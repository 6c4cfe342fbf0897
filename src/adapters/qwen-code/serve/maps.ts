// Qwen Code 0.24.4 `qwen serve` as data: which daemon events are lane facts, and what each HTTP
// answer means as a lane outcome. Pure: the lane (`lane.ts`) does the I/O and keeps the state
// these functions read. Evidence: the daemon's answers and SSE frames observed against the
// loopback mock model (docs/vendors.md, Qwen Code notes, `test/e2e/qwen-serve-lane.e2e.ts`).
import type { LaneFact, LaneOutcome } from '../../../streams/lane.js';
import { toolPermissionHold } from '../../table.js';
import { toolDetail } from '../../tool-detail.js';
import { recordShape } from '../../../protocol/wire-shapes.js';

const TOKEN = 'qwen-code';

/** One SSE frame's JSON envelope: `{id, v, type, data, promptId?}`. */
export interface ServeEvent {
  id?: number;
  type: string;
  promptId?: string;
  data?: Record<string, unknown>;
}

/** An HTTP answer: its status and parsed JSON body (undefined when none or not JSON). */
export interface ServeReply {
  status: number;
  body: unknown;
}

/** A permission request's own options (`{optionId, kind: allow_once | reject_once | …, name}`). */
export interface ServeOption {
  optionId: string;
  kind: string;
  name?: string;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const rec = (v: unknown): Record<string, unknown> | undefined =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;

/** Parses one SSE `data:` payload; undefined for anything that is not an envelope with a type. */
export function parseServeEvent(data: string): ServeEvent | undefined {
  let v: unknown;
  try {
    v = JSON.parse(data);
  } catch {
    return undefined;
  }
  const o = rec(v);
  const type = str(o?.type);
  if (o === undefined || type === undefined) return undefined;
  recordShape('qwen-code serve', type, o);
  const e: ServeEvent = { type };
  if (typeof o.id === 'number') e.id = o.id;
  const promptId = str(o.promptId);
  if (promptId !== undefined) e.promptId = promptId;
  const d = rec(o.data);
  if (d !== undefined) e.data = d;
  return e;
}

/**
 * What the lane knows about one followed session: the prompt (turn) running now, the turns
 * already ended (a late frame of an ended turn starts nothing), and a lookup from a vendor
 * reference (message id, prompt id) to the command the lane sent under it.
 */
export interface SessionView {
  turn?: string;
  ended: ReadonlySet<string>;
  commandOf(ref: string): string | undefined;
  optionsOf(requestId: string): readonly ServeOption[] | undefined;
}

/** Observed on 0.24.4: which frames open a turn (the prompt's echo, a queued prompt starting). */
const OPENS = new Set(['session_update', 'pending_prompt_started']);

const ALLOW = (o: ServeOption) => o.kind.startsWith('allow');
const REJECT = (o: ServeOption) => o.kind.startsWith('reject');

/** The options a `permission_request` offers, as the daemon listed them. */
export function optionsOf(e: ServeEvent): ServeOption[] {
  const list = Array.isArray(e.data?.options) ? e.data.options : [];
  return list.flatMap((x) => {
    const o = rec(x);
    const optionId = str(o?.optionId);
    const kind = str(o?.kind);
    if (optionId === undefined || kind === undefined) return [];
    const name = str(o?.name);
    return [name === undefined ? { optionId, kind } : { optionId, kind, name }];
  });
}

/**
 * The facts one frame carries. `turn_complete` ends the prompt it names (`stopReason` is its
 * status: `end_turn`, `cancelled`), unless another prompt is the one running: a queued prompt
 * taken back (`DELETE …/pending-prompts/:id`) gets a `turn_complete {stopReason: "cancelled"}` of
 * its own while the running turn goes on (0.24.4). The first frame of a prompt not yet seen
 * starts it, and is the receipt when the prompt is the lane's own: a queued prompt starts with
 * `pending_prompt_started`, one sent while no turn ran with its echo (`session_update`), and a
 * mid-turn message a cancel promoted to a prompt runs under its message id.
 * `mid_turn_message_injected` lists the message ids that reached the model (the receipt).
 */
export function factsOf(session: string, e: ServeEvent, view: SessionView, at: number): LaneFact[] {
  const facts: LaneFact[] = [];
  const prompt = str(e.data?.promptId) ?? e.promptId;
  if (e.type === 'turn_complete') {
    if (prompt === undefined || view.ended.has(prompt)) return [];
    if (view.turn !== undefined && view.turn !== prompt) return [];
    const status = str(e.data?.stopReason) ?? 'end_turn';
    return [{ kind: 'turn.ended', session, at, turnId: prompt, status, interrupted: status === 'cancelled' }];
  }
  if (OPENS.has(e.type) && prompt !== undefined && prompt !== view.turn && !view.ended.has(prompt)) {
    facts.push({ kind: 'turn.started', session, at, turnId: prompt });
    const commandId = view.commandOf(prompt);
    if (commandId !== undefined) facts.push({ kind: 'delivered', session, at, commandId, ref: prompt });
  }
  switch (e.type) {
    case 'mid_turn_message_injected': {
      const ids = Array.isArray(e.data?.messageIds) ? e.data.messageIds : [];
      for (const ref of ids) {
        const commandId = typeof ref === 'string' ? view.commandOf(ref) : undefined;
        if (commandId !== undefined) facts.push({ kind: 'delivered', session, at, commandId, ref: ref as string });
      }
      break;
    }
    case 'permission_request': {
      const approvalId = str(e.data?.requestId);
      if (approvalId === undefined) break;
      const call = rec(e.data?.toolCall);
      const tool = str(rec(call?._meta)?.toolName) ?? str(call?.kind) ?? 'a tool';
      // D35: what the tool will do (its command, path) as redacted-class `detail`.
      const detail = toolDetail(call?.rawInput) ?? str(call?.title);
      const { request } = toolPermissionHold(
        TOKEN,
        tool,
        { requestId: approvalId, toolCallId: str(call?.toolCallId) ?? '' },
        undefined,
        detail,
      );
      // First responder wins: the daemon's own clients (its web shell) may answer too.
      facts.push({
        kind: 'approval',
        session,
        at,
        approvalId,
        request: { ...request, respondVia: ['control', 'oob'] },
      });
      break;
    }
    case 'permission_resolved': {
      const approvalId = str(e.data?.requestId);
      if (approvalId === undefined) break;
      const outcome = rec(e.data?.outcome);
      const chosen = str(outcome?.optionId);
      const option = view.optionsOf(approvalId)?.find((o) => o.optionId === chosen);
      facts.push(
        option === undefined
          ? { kind: 'approval.resolved', session, at, approvalId }
          : { kind: 'approval.resolved', session, at, approvalId, approved: ALLOW(option) },
      );
      break;
    }
  }
  return facts;
}

/** The body `POST /session/:id/permission/:requestId` takes for an allow or a deny. */
export function permissionAnswer(options: readonly ServeOption[], approved: boolean): Record<string, unknown> {
  const option = options.find(approved ? ALLOW : REJECT);
  // A request without a reject option is declined by cancelling it, which the daemon treats as a no.
  if (option === undefined) return { outcome: { outcome: 'cancelled' } };
  return { outcome: { outcome: 'selected', optionId: option.optionId } };
}

const errorText = (body: unknown): string => str(rec(body)?.error) ?? str(rec(body)?.code) ?? '';

/** An HTTP answer that is not the route's success, as the lane reports it. */
function failed(r: ServeReply, what: string): LaneOutcome {
  const text = errorText(r.body);
  const detail = `qwen serve answered ${what} with HTTP ${r.status}${text === '' ? '' : `: ${text}`}`;
  // 404: the daemon no longer hosts the session; 5xx: it cannot take it now (prompt_queue_full).
  if (r.status === 404 || r.status >= 500) return { ok: false, reason: 'unreachable', detail };
  return { ok: false, reason: 'refused', detail };
}

/**
 * `POST /session/:id/mid-turn-message {message, messageId}`: `{accepted: true, messageId}` is
 * queued into the running turn (read at its next model request); `{accepted: false, reason:
 * "session_idle"}` means no turn runs (`turn-ended` when the lane saw one running: it ended
 * first); `{accepted: false}` alone is the same id already holding another text.
 */
export function steerOutcome(r: ServeReply, commandId: string, turnRunning: boolean): LaneOutcome {
  if (r.status !== 200) return failed(r, 'the mid-turn message');
  const b = rec(r.body);
  if (b?.accepted === true) return { ok: true, ref: str(b.messageId) ?? commandId };
  if (b?.reason === 'session_idle')
    return turnRunning
      ? { ok: false, reason: 'turn-ended', detail: 'the turn ended before qwen serve took the message' }
      : { ok: false, reason: 'idle', detail: 'no turn runs in this qwen serve session; a steer never starts one' };
  return {
    ok: false,
    reason: 'refused',
    detail: `qwen serve refused message id ${commandId}: it already holds another text under that id`,
  };
}

/**
 * `POST /session/:id/prompt`: 202 `{promptId}`. While a prompt runs it waits in the daemon's
 * queue and runs as the next turn; with none running it is the turn that starts now.
 */
export function queueOutcome(r: ServeReply): LaneOutcome {
  const promptId = str(rec(r.body)?.promptId);
  if (r.status !== 202 || promptId === undefined) return failed(r, 'the queued prompt');
  return { ok: true, ref: promptId };
}

/** `DELETE …/mid-turn-messages/:id` and `…/pending-prompts/:id`: `{removed: boolean}`. */
export function removedOf(r: ServeReply): { removed: boolean } | { error: string } {
  const removed = rec(r.body)?.removed;
  if (r.status === 200 && typeof removed === 'boolean') return { removed };
  const text = errorText(r.body);
  return { error: `qwen serve answered the withdrawal with HTTP ${r.status}${text === '' ? '' : `: ${text}`}` };
}
