// A stand-in OpenHands agent server, written from the contract in
// ../shared/reference/openhands-agent-server.md (software-agent-sdk v1.36.1 source; `parentIds`
// switches on the v1.37 transport shape that keeps `parent_id`). Design-derived: it proves the
// bridge against the documented contract, not OpenHands' own consumption. Test-only, not shipped.
//
// What it speaks: the REST routes with their status codes and `X-Session-API-Key` auth (an empty
// key list is open); the event WebSocket's three auth paths (query, header, first frame within the
// window) and its close codes (4001 auth, 4004 unknown conversation, 1013 over the subscriber
// cap); `full_state` first on subscribe, then the resend. Status changes are stored in the
// conversation's log and resent like every other event, as the real server does (v1.36.1 and
// main): ConversationState.__setattr__ hands a ConversationStateUpdateEvent(key, value) to its
// state-change callback (openhands-sdk `conversation/state.py`, the callback block at the end of
// `__setattr__`); the server sets that callback to the conversation's event callback
// (openhands-agent-server `event_service.py`, `set_on_state_change(self._conversation._on_event)`),
// whose default callback stores every event (`conversation/impl/local_conversation.py`
// `_default_callback` → `state.append_event`, which stamps `parent_id` from the last non-state
// event and does not advance it for a state update). The `full_state` snapshot is made at
// subscribe time and sent to that subscriber only, never stored (`event_service.py`
// `subscribe_to_events`); the resend follows it (`sockets.py`, `page_iterator(search_events)`).
// An ActionEvent's `tool_call` is the SDK's MessageToolCall `{id, name, arguments, origin}` with
// `arguments` a JSON string (`llm/message.py`, v1.35.0, v1.36.1 and main). And an agent loop: while a conversation
// is running, each step calls a Chat Completions endpoint with messages built from the
// conversation's event log, so a user message appended during a step reaches the next request.
// Every HTTP request and every inbound socket frame is recorded, so a test can say what a client
// wrote.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { readBody } from './mock-openai.js';

type Status = 'idle' | 'running' | 'paused' | 'waiting_for_confirmation' | 'finished' | 'error' | 'stuck' | 'deleting';
type Ev = Record<string, unknown> & { id: string; kind: string; timestamp: string; source: string };

interface LoggedRequest {
  transport: 'http' | 'ws-upgrade' | 'ws-frame';
  method: string;
  path: string;
  query: Record<string, string>;
  /** Header names only for auth-bearing ones; the key itself is never kept. */
  keyHeader: boolean;
  body?: unknown;
  status?: number;
}

export interface StandInOptions {
  /** `OH_SESSION_API_KEYS_0…`; empty means auth is off. */
  keys?: string[];
  /** Chat Completions base URL (`…/v1`) the agent loop calls. */
  modelUrl: string;
  /** v1.37+: events keep `parent_id` on the wire. */
  parentIds?: boolean;
  /** First-frame auth window (the server's is 10 s). */
  authWindowMs?: number;
  /** Subscribers per conversation (50 in the server). */
  maxSubscribers?: number;
}

interface Conversation {
  id: string;
  status: Status;
  events: Ev[];
  subscribers: Set<WebSocket>;
  confirmation: boolean;
  /** Actions awaiting respond_to_confirmation. */
  pending: Ev[];
  /** The loop's current model call, for interrupt. */
  abort?: AbortController;
  looping: boolean;
  pauseRequested: boolean;
  /** A user message arrived while a step was in flight (the loop re-checks before finishing). */
  unread: boolean;
  createdAt: string;
}

export interface StandIn {
  url: string;
  port: number;
  requests: LoggedRequest[];
  /** Requests a client made, beside what the test itself drove in-process. */
  conversation(id: string): { status: Status; events: Ev[] } | undefined;
  /** Creates a conversation (operator side, in-process): SystemPromptEvent, then the first message. */
  create(opts?: { message?: string; run?: boolean; confirmation?: boolean }): string;
  /** The operator's own send (in-process): appends a user message and optionally runs. */
  send(id: string, text: string, run?: boolean): void;
  /** Forgets a conversation (its REST routes answer 404 from now on); its sockets stay open. */
  forget(id: string): void;
  /** The operator's `run` (in-process): starts the agent loop. */
  run(id: string): void;
  /** Emits an arbitrary event on a conversation (for kinds the loop does not produce). */
  emit(id: string, event: Record<string, unknown>): void;
  /** Flips a status from outside the loop (deleting, error, stuck). */
  setStatus(id: string, status: Status): void;
  /** Resolves once the conversation reaches one of these statuses. */
  until(id: string, ...statuses: Status[]): Promise<void>;
  /** Replaces the configured keys (an operator fixing OH_SESSION_API_KEYS_0 and restarting). */
  setKeys(keys: string[]): void;
  /** Closes every subscriber socket with a normal close (a server restart, for reconnects). */
  dropSockets(): void;
  close(): Promise<void>;
}

/** Naive server-local ISO with microseconds, as the SDK writes `timestamp`. */
let micro = 0;
function naiveNow(): string {
  const d = new Date();
  const pad = (n: number, w = 2) => String(n).padStart(w, '0');
  micro = (micro + 1) % 1000;
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}${pad(micro, 3)}`;
}

const TOOLS = [
  {
    type: 'function',
    function: {
      name: 'execute_bash',
      description: 'Run a shell command',
      parameters: { type: 'object', properties: { command: { type: 'string' } }, required: ['command'] },
    },
  },
];

const textPart = (text: string) => [{ type: 'text', text }];
const textOf = (content: unknown): string =>
  Array.isArray(content)
    ? content
        .map((p) =>
          p && typeof p === 'object' && typeof (p as { text?: unknown }).text === 'string'
            ? (p as { text: string }).text
            : '',
        )
        .join('')
    : '';

/** The model's view of the conversation, built from its event log the way the SDK's agent does. */
function messagesOf(events: readonly Ev[]): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const e of events) {
    if (e.kind === 'SystemPromptEvent') out.push({ role: 'system', content: textOf([e.system_prompt]) });
    else if (e.kind === 'MessageEvent') {
      const m = e.llm_message as { role: string; content: unknown };
      out.push({ role: m.role, content: textOf(m.content) });
    } else if (e.kind === 'ActionEvent') {
      // MessageToolCall back into the Chat Completions shape the model speaks.
      const call = e.tool_call as { id: string; name: string; arguments: string };
      out.push({
        role: 'assistant',
        content: null,
        tool_calls: [{ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } }],
      });
    } else if (e.kind === 'ObservationEvent')
      out.push({
        role: 'tool',
        tool_call_id: e.tool_call_id,
        content: textOf((e.observation as { content: unknown }).content),
      });
    else if (e.kind === 'UserRejectObservation')
      out.push({ role: 'tool', tool_call_id: e.tool_call_id, content: `Rejected: ${String(e.rejection_reason)}` });
  }
  return out;
}

export async function startOpenHandsServer(opts: StandInOptions): Promise<StandIn> {
  let keys = opts.keys ?? [];
  const authWindowMs = opts.authWindowMs ?? 10_000;
  const maxSubscribers = opts.maxSubscribers ?? 50;
  const conversations = new Map<string, Conversation>();
  const requests: LoggedRequest[] = [];
  const waiters = new Set<() => void>();
  const keyOk = (k: unknown) => keys.length === 0 || (typeof k === 'string' && keys.includes(k));

  function info(c: Conversation) {
    return {
      id: c.id,
      execution_status: c.status,
      created_at: c.createdAt,
      updated_at: c.events.at(-1)?.timestamp ?? c.createdAt,
      title: null,
    };
  }

  /** The transport dump: exclude_none; v1.36 strips parent_id, v1.37+ keeps it. */
  const wire = (e: Ev): Ev => {
    if (opts.parentIds) return e;
    const { parent_id: _p, ...rest } = e;
    return rest as Ev;
  };

  function broadcast(c: Conversation, e: Ev): void {
    const text = JSON.stringify(wire(e));
    for (const ws of c.subscribers) ws.send(text);
  }

  const isStateUpdate = (e: Ev) => e.kind === 'ConversationStateUpdateEvent';

  /** Stores the event and publishes it live (state.append_event, then the pub/sub). */
  function append(c: Conversation, fields: Record<string, unknown> & { kind: string; source: string }): Ev {
    const e = { id: randomUUID(), timestamp: naiveNow(), ...fields } as Ev;
    // parent_id is the last tree node: a state update is stored but is not one.
    const parent = [...c.events].reverse().find((x) => !isStateUpdate(x))?.id;
    if (parent !== undefined) e.parent_id = parent;
    c.events.push(e);
    broadcast(c, e);
    return e;
  }

  /** A status change is stored like any event and resent on attach. */
  function setStatus(c: Conversation, status: Status): void {
    if (c.status === status) return;
    c.status = status;
    append(c, { source: 'environment', kind: 'ConversationStateUpdateEvent', key: 'execution_status', value: status });
    for (const w of [...waiters]) w();
  }

  function fullState(c: Conversation): Ev {
    return {
      id: randomUUID(),
      timestamp: naiveNow(),
      source: 'environment',
      kind: 'ConversationStateUpdateEvent',
      key: 'full_state',
      value: {
        id: c.id,
        execution_status: c.status,
        confirmation_policy: c.confirmation ? 'AlwaysConfirm' : 'NeverConfirm',
        max_iterations: 500,
      },
    };
  }

  function userMessage(c: Conversation, text: string): void {
    // The append resets finished/stuck to idle (local_conversation.send_message).
    if (c.status === 'finished' || c.status === 'stuck') setStatus(c, 'idle');
    append(c, {
      kind: 'MessageEvent',
      source: 'user',
      llm_message: { role: 'user', content: textPart(text) },
      activated_skills: [],
      extended_content: [],
      sender: null,
    });
    if (c.looping) c.unread = true;
  }

  function execute(c: Conversation, action: Ev): void {
    const args = JSON.parse(String((action.tool_call as { arguments: string }).arguments)) as { command?: string };
    const command = typeof args.command === 'string' ? args.command : '';
    const output = command.startsWith('echo ') ? command.slice(5) : `ran: ${command}`;
    append(c, {
      kind: 'ObservationEvent',
      source: 'environment',
      tool_name: action.tool_name,
      tool_call_id: action.tool_call_id,
      action_id: action.id,
      observation: {
        kind: 'ExecuteBashObservation',
        content: textPart(output),
        is_error: false,
        command,
        exit_code: 0,
      },
    });
  }

  /** One agent step: the model reads the log, answers with tool calls or a message. */
  async function step(c: Conversation): Promise<'continue' | 'finished' | 'waiting' | 'stopped'> {
    c.unread = false;
    c.abort = new AbortController();
    let reply: {
      id: string;
      choices: {
        message: {
          content?: string | null;
          tool_calls?: { id: string; type: string; function: { name: string; arguments: string } }[];
        };
      }[];
    };
    try {
      const res = await fetch(`${opts.modelUrl}/chat/completions`, {
        method: 'POST',
        signal: c.abort.signal,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'mock-model', stream: false, messages: messagesOf(c.events), tools: TOOLS }),
      });
      reply = (await res.json()) as typeof reply;
    } catch (err) {
      if (c.abort.signal.aborted) return 'stopped';
      append(c, {
        kind: 'ConversationErrorEvent',
        source: 'environment',
        code: 'LLMConnectionError',
        detail: String(err),
      });
      setStatus(c, 'error');
      return 'stopped';
    } finally {
      c.abort = undefined;
    }
    if (c.status !== 'running') return 'stopped';
    const message = reply.choices[0]?.message ?? {};
    const calls = message.tool_calls ?? [];
    if (calls.length === 0) {
      append(c, {
        kind: 'MessageEvent',
        source: 'agent',
        llm_message: { role: 'assistant', content: textPart(message.content ?? '') },
        llm_response_id: reply.id,
        activated_skills: [],
      });
      // A message appended while this step ran is still processed (local_conversation.run).
      return c.unread ? 'continue' : 'finished';
    }
    const actions = calls.map((call) =>
      append(c, {
        kind: 'ActionEvent',
        source: 'agent',
        thought: [],
        tool_name: call.function.name === 'run_shell_command' ? 'execute_bash' : call.function.name,
        tool_call_id: call.id,
        tool_call: { id: call.id, name: call.function.name, arguments: call.function.arguments, origin: 'completion' },
        llm_response_id: reply.id,
        security_risk: 'LOW',
        action: { kind: 'ExecuteBashAction', ...(JSON.parse(call.function.arguments) as Record<string, unknown>) },
      }),
    );
    if (c.confirmation) {
      c.pending = actions;
      return 'waiting';
    }
    for (const a of actions) execute(c, a);
    return 'continue';
  }

  async function loop(c: Conversation): Promise<void> {
    if (c.looping) return;
    c.looping = true;
    setStatus(c, 'running');
    try {
      for (;;) {
        if (c.pauseRequested) {
          c.pauseRequested = false;
          append(c, { kind: 'PauseEvent', source: 'user' });
          setStatus(c, 'paused');
          return;
        }
        const r = await step(c);
        if (r === 'stopped') return;
        if (r === 'finished') {
          setStatus(c, 'finished');
          return;
        }
        if (r === 'waiting') {
          setStatus(c, 'waiting_for_confirmation');
          return;
        }
      }
    } finally {
      c.looping = false;
    }
  }

  /** `run`: from waiting it proceeds with the pending actions (a silent accept). */
  function run(c: Conversation): void {
    if (c.status === 'waiting_for_confirmation') {
      const pending = c.pending;
      c.pending = [];
      setStatus(c, 'running');
      for (const a of pending) execute(c, a);
    }
    void loop(c);
  }

  function json(res: ServerResponse, status: number, body: unknown, logged: LoggedRequest): void {
    logged.status = status;
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  }

  function page<T>(items: T[], url: URL): { items: T[]; next_page_id: string | null } {
    const limit = Math.min(100, Math.max(1, Number(url.searchParams.get('limit') ?? '100') || 100));
    const start = Number(url.searchParams.get('page_id') ?? '0') || 0;
    const slice = items.slice(start, start + limit);
    return { items: slice, next_page_id: start + limit < items.length ? String(start + limit) : null };
  }

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://stand-in');
    const text = await readBody(req);
    let body: unknown;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      body = Symbol.for('malformed');
    }
    const logged: LoggedRequest = {
      transport: 'http',
      method: req.method ?? 'GET',
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      keyHeader: req.headers['x-session-api-key'] !== undefined,
      ...(typeof body === 'symbol' ? { body: text } : body === undefined ? {} : { body }),
    };
    requests.push(logged);
    if (!url.pathname.startsWith('/api/') || url.pathname === '/api/init')
      return json(res, 404, { detail: 'Not Found' }, logged);
    if (!keyOk(req.headers['x-session-api-key'])) return json(res, 401, { detail: 'Unauthorized' }, logged);
    const parts = url.pathname.split('/').filter(Boolean); // api conversations {id} …
    if (parts[1] !== 'conversations') return json(res, 404, { detail: 'Not Found' }, logged);
    if (req.method === 'GET' && parts[2] === 'search' && parts.length === 3) {
      const status = url.searchParams.get('status');
      const all = [...conversations.values()].filter((c) => status === null || c.status === status).map(info);
      return json(res, 200, page(all, url), logged);
    }
    const c = parts[2] === undefined ? undefined : conversations.get(parts[2]);
    if (!c) return json(res, 404, { detail: `Conversation not found: ${parts[2] ?? ''}` }, logged);
    const rest = parts.slice(3).join('/');
    if (req.method === 'GET' && rest === '') return json(res, 200, info(c), logged);
    if (req.method === 'GET' && rest === 'events/search') return json(res, 200, page(c.events.map(wire), url), logged);
    if (req.method !== 'POST') return json(res, 405, { detail: 'Method Not Allowed' }, logged);
    if (typeof body === 'symbol')
      return json(res, 422, { detail: [{ type: 'json_invalid', msg: 'JSON decode error' }] }, logged);
    const b = (body ?? {}) as Record<string, unknown>;
    switch (rest) {
      case 'events': {
        const role = b.role ?? 'user';
        const content = b.content;
        if (
          !['user', 'system', 'assistant', 'tool'].includes(String(role)) ||
          !Array.isArray(content) ||
          (b.run !== undefined && typeof b.run !== 'boolean')
        ) {
          return json(
            res,
            422,
            { detail: [{ type: 'validation_error', loc: ['body'], msg: 'invalid SendMessageRequest' }] },
            logged,
          );
        }
        // The request model takes any role; the conversation asserts user-only.
        if (role !== 'user') return json(res, 500, { detail: 'Internal Server Error' }, logged);
        userMessage(c, textOf(content));
        if (b.run === true) run(c);
        return json(res, 200, { success: true }, logged);
      }
      case 'events/respond_to_confirmation': {
        if (typeof b.accept !== 'boolean')
          return json(
            res,
            422,
            { detail: [{ type: 'missing', loc: ['body', 'accept'], msg: 'Field required' }] },
            logged,
          );
        if (c.status === 'waiting_for_confirmation') {
          if (b.accept) run(c);
          else {
            const reason = typeof b.reason === 'string' ? b.reason : 'User rejected the action.';
            for (const a of c.pending) {
              append(c, {
                kind: 'UserRejectObservation',
                source: 'user',
                tool_name: a.tool_name,
                tool_call_id: a.tool_call_id,
                action_id: a.id,
                rejection_reason: reason,
                rejection_source: 'user',
              });
            }
            c.pending = [];
            setStatus(c, 'idle');
          }
        }
        return json(res, 200, { success: true }, logged);
      }
      case 'pause':
        // pause() acts only from idle or running; the route reports anything else as a 400.
        if (c.status !== 'running' && c.status !== 'idle')
          return json(res, 400, { detail: `cannot pause from ${c.status}` }, logged);
        if (c.looping) c.pauseRequested = true;
        else {
          append(c, { kind: 'PauseEvent', source: 'user' });
          setStatus(c, 'paused');
        }
        return json(res, 200, { success: true }, logged);
      case 'interrupt':
        if (c.status === 'running' && c.abort) {
          c.abort.abort();
          append(c, { kind: 'InterruptEvent', source: 'user' });
          setStatus(c, 'paused');
          return json(res, 200, { success: true }, logged);
        }
        if (c.status === 'running' || c.status === 'idle') {
          // No task in flight: interrupt falls back to pause().
          if (c.looping) c.pauseRequested = true;
          else setStatus(c, 'paused');
          return json(res, 200, { success: true }, logged);
        }
        return json(res, 400, { detail: `cannot interrupt from ${c.status}` }, logged);
      case 'run':
        if (c.status === 'running') return json(res, 409, { detail: 'Conversation already running' }, logged);
        run(c);
        return json(res, 200, { success: true }, logged);
      default:
        return json(res, 404, { detail: 'Not Found' }, logged);
    }
  }

  const server: Server = createServer((req, res) => {
    route(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  const wss = new WebSocketServer({ noServer: true });

  function subscribe(ws: WebSocket, c: Conversation, url: URL): void {
    if (c.subscribers.size >= maxSubscribers) {
      ws.close(1013, 'too many subscribers');
      return;
    }
    c.subscribers.add(ws);
    ws.on('close', () => c.subscribers.delete(ws));
    ws.send(JSON.stringify(wire(fullState(c))));
    const mode = url.searchParams.get('resend_mode');
    const after = url.searchParams.get('after_timestamp');
    const resend =
      mode === 'all'
        ? c.events
        : mode === 'since' && after !== null
          ? c.events.filter((e) => e.timestamp >= after)
          : [];
    for (const e of resend) ws.send(JSON.stringify(wire(e)));
  }

  server.on('upgrade', (req, socket, head) => {
    const url = new URL(req.url ?? '/', 'http://stand-in');
    requests.push({
      transport: 'ws-upgrade',
      method: 'GET',
      path: url.pathname,
      query: Object.fromEntries([...url.searchParams].map(([k, v]) => [k, k === 'session_api_key' ? '[key]' : v])),
      keyHeader: req.headers['x-session-api-key'] !== undefined,
    });
    const m = /^\/sockets\/events\/([^/]+)$/.exec(url.pathname);
    if (!m) {
      socket.end('HTTP/1.1 404 Not Found\r\n\r\n');
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      const id = decodeURIComponent(m[1]!);
      let authed = keys.length === 0;
      const proceed = () => {
        const c = conversations.get(id);
        if (!c) ws.close(4004, 'conversation not found');
        else subscribe(ws, c, url);
      };
      ws.on('message', (raw) => {
        let frame: Record<string, unknown> = {};
        try {
          frame = JSON.parse(String(raw)) as Record<string, unknown>;
        } catch {
          /* recorded as is */
        }
        requests.push({
          transport: 'ws-frame',
          method: 'FRAME',
          path: url.pathname,
          query: {},
          keyHeader: false,
          body: frame.type === 'auth' ? { type: 'auth', session_api_key: '[key]' } : frame,
        });
        if (frame.type === 'auth') {
          // With no keys configured a later auth frame is ignored.
          if (authed) return;
          if (!keyOk(frame.session_api_key)) {
            ws.close(4001, 'authentication failed');
            return;
          }
          authed = true;
          clearTimeout(window);
          proceed();
          return;
        }
        if (!authed) return;
        // Any other frame is a Message, sent with run: true.
        const c = conversations.get(id);
        if (c && Array.isArray(frame.content)) {
          userMessage(c, textOf(frame.content));
          run(c);
        }
      });
      const viaQuery = url.searchParams.get('session_api_key');
      const viaHeader = req.headers['x-session-api-key'];
      let window: NodeJS.Timeout | undefined;
      if (authed) proceed();
      else if (viaQuery !== null || viaHeader !== undefined) {
        if (keyOk(viaQuery ?? viaHeader)) {
          authed = true;
          proceed();
        } else ws.close(4001, 'authentication failed');
      } else {
        window = setTimeout(() => ws.close(4001, 'authentication timeout'), authWindowMs);
        ws.on('close', () => clearTimeout(window));
      }
    });
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;

  const handle: StandIn = {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    conversation: (id) => {
      const c = conversations.get(id);
      return c && { status: c.status, events: c.events };
    },
    create(o = {}) {
      const c: Conversation = {
        id: randomUUID().replace(/-/g, ''),
        status: 'idle',
        events: [],
        subscribers: new Set(),
        confirmation: o.confirmation === true,
        pending: [],
        looping: false,
        pauseRequested: false,
        unread: false,
        createdAt: naiveNow(),
      };
      conversations.set(c.id, c);
      append(c, {
        kind: 'SystemPromptEvent',
        source: 'agent',
        system_prompt: { type: 'text', text: 'You are a software agent.' },
        tools: [],
      });
      if (o.message !== undefined) userMessage(c, o.message);
      if (o.run === true) run(c);
      return c.id;
    },
    send(id, text, runIt = false) {
      const c = conversations.get(id);
      if (!c) throw new Error(`no conversation ${id}`);
      userMessage(c, text);
      if (runIt) run(c);
    },
    forget(id) {
      conversations.delete(id);
    },
    run(id) {
      const c = conversations.get(id);
      if (!c) throw new Error(`no conversation ${id}`);
      run(c);
    },
    emit(id, event) {
      const c = conversations.get(id);
      if (!c) throw new Error(`no conversation ${id}`);
      append(c, event as Record<string, unknown> & { kind: string; source: string });
    },
    setStatus(id, status) {
      const c = conversations.get(id);
      if (!c) throw new Error(`no conversation ${id}`);
      setStatus(c, status);
    },
    until(id, ...statuses) {
      return new Promise((resolve) => {
        const check = () => {
          if (statuses.includes(conversations.get(id)?.status as Status)) {
            waiters.delete(check);
            resolve();
          }
        };
        waiters.add(check);
        check();
      });
    },
    setKeys(next) {
      keys = [...next];
    },
    dropSockets() {
      for (const c of conversations.values()) for (const ws of c.subscribers) ws.close(1012, 'service restart');
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const c of conversations.values()) c.abort?.abort();
        for (const ws of wss.clients) ws.terminate();
        wss.close();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return handle;
}
