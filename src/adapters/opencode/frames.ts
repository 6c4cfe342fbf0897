// opencode 1.18.33's global event stream (`GET /api/event`) as data: one SSE frame's envelope,
// the session it is about, and which frames matter to steering. Pure: the server connection
// (server.ts) does the I/O. Shapes observed against the loopback mock model
// (copilot-opencode-observed §2, and `test/e2e/opencode-serve.e2e.ts`):
// `{id: "evt_…", type, durable?: {aggregateID, seq}, location?: {directory}, data: {sessionID, …}}`.

/** One frame of the event stream. */
export interface OpencodeEvent {
  type: string;
  session?: string;
  data: Record<string, unknown>;
  /** The session's folder, where the frame names one. */
  directory?: string;
}

export const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
export const rec = (v: unknown): Record<string, unknown> | undefined =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;

/** Parses one SSE `data:` payload; undefined for anything that is not an envelope with a type. */
export function parseOpencodeEvent(raw: string): OpencodeEvent | undefined {
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    return undefined;
  }
  const o = rec(v);
  const type = str(o?.type);
  if (o === undefined || type === undefined) return undefined;
  // The V1 stream's shape (`properties`) is accepted too: a server that sends it is still read.
  const data = rec(o.data) ?? rec(o.properties) ?? {};
  const session = str(data.sessionID) ?? str(rec(data.info)?.sessionID) ?? str(rec(o.durable)?.aggregateID);
  const directory = str(rec(o.location)?.directory) ?? str(rec(data.info)?.directory);
  return {
    type,
    data,
    ...(session?.startsWith('ses') === true ? { session } : {}),
    ...(directory === undefined ? {} : { directory }),
  };
}

/** A prompt the server folded into the loop (after `session.next.prompt.admitted`): the receipt. */
export const PROMPTED = 'session.next.prompted';
/**
 * A V1 message saved (`{info: {id, sessionID, role, parentID?}}`). The V1 loop (a TUI's turn) saves
 * each step's assistant message, naming as its parent the last user message the step's request
 * carries, before it asks the model: for a prompt sent through V1, the receipt.
 */
export const MESSAGE_UPDATED = 'message.updated';

/** The user message a V1 step answers (its assistant message's `parentID`); undefined for any other frame. */
export function stepParentOf(e: OpencodeEvent): string | undefined {
  if (e.type !== MESSAGE_UPDATED) return undefined;
  const info = rec(e.data.info);
  return info?.role === 'assistant' ? str(info.parentID) : undefined;
}

/** A step's end: after one, the server may be idle (it says so only on `GET /api/session/active`). */
export const STEP_ENDS: ReadonlySet<string> = new Set([
  'session.next.step.ended',
  'session.next.step.failed',
  'session.error',
]);
export const PERMISSION_ASKED = 'permission.v2.asked';
export const PERMISSION_REPLIED = 'permission.v2.replied';
export const SESSION_DELETED = 'session.deleted';

/**
 * The frames that become arrivals for the vendor table: the session's life, its tools and its
 * permission requests. Streaming deltas, catalogue and plugin frames are left out (no AEP
 * observation, and they are most of the stream).
 */
export const OBSERVED: ReadonlySet<string> = new Set([
  'session.created',
  SESSION_DELETED,
  'session.next.tool.called',
  'session.next.tool.success',
  'session.next.tool.failed',
  'session.next.step.failed',
  'session.next.compaction.ended',
  PERMISSION_ASKED,
  PERMISSION_REPLIED,
]);

/** Synthetic frames the connection adds: a session it learnt of, and its turn tracking (opencode names no turn). */
export const SESSION_SEEN = 'aep.session.seen';
export const TURN_STARTED = 'aep.turn.started';
export const TURN_ENDED = 'aep.turn.ended';

/** `/api/session/active` → the ids of the sessions running now (`{data: {ses_…: {type: "running"}}}`). */
export function runningOf(body: unknown): Set<string> {
  const data = rec(rec(body)?.data) ?? {};
  return new Set(Object.entries(data).flatMap(([id, v]) => (rec(v)?.type === 'running' ? [id] : [])));
}

/**
 * V1 `/session/status` → the sessions it says are busy. The TUI (`opencode attach`) prompts
 * through the V1 routes, whose turns 1.18.33 shows there only: not in `/api/session/active`, and
 * with no `session.next.*` frame.
 */
export function busyOf(body: unknown): Set<string> {
  return new Set(
    Object.entries(rec(body) ?? {}).flatMap(([id, v]) =>
      rec(v)?.type === 'busy' || rec(v)?.type === 'retry' ? [id] : [],
    ),
  );
}

/** `/api/session` → the ids of the sessions it lists, with their folders. */
export function sessionsOf(body: unknown): { id: string; directory?: string }[] {
  const list = Array.isArray(rec(body)?.data) ? (rec(body)!.data as unknown[]) : [];
  return list.flatMap((x) => {
    const s = rec(x);
    const id = str(s?.id);
    if (id === undefined) return [];
    const directory = str(rec(s?.location)?.directory) ?? str(s?.directory);
    return [directory === undefined ? { id } : { id, directory }];
  });
}

/**
 * A frame as the table's hook input (the field names the shared Claude-style maps read):
 * `hook_event_name` is the frame's type, `session_id` its session, and a tool frame names its
 * tool and call. `first` marks the first frame of a session the connection had not seen.
 */
export function arrivalBody(e: OpencodeEvent, first: boolean): Record<string, unknown> {
  const d = e.data;
  const body: Record<string, unknown> = { hook_event_name: e.type, session_id: e.session };
  if (first) body.first = true;
  if (e.directory !== undefined) body.cwd = e.directory;
  const tool = str(d.tool) ?? str(d.name) ?? str(d.action);
  if (tool !== undefined) body.tool_name = tool;
  const call = str(d.callID) ?? str(rec(d.source)?.callID);
  if (call !== undefined) body.tool_use_id = call;
  if (d.input !== undefined) body.tool_input = d.input;
  const error = rec(d.error);
  if (error !== undefined) {
    body.error = str(error.type) ?? 'error';
    body.is_interrupt = /interrupt|abort/i.test(str(error.message) ?? '');
  }
  for (const k of ['id', 'requestID', 'reply', 'messageID', 'finish', 'turnId', 'interrupted'])
    if (d[k] !== undefined) body[k] = d[k];
  return body;
}
