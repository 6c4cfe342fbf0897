// A stand-in `qwen serve` daemon (Qwen Code 0.24.4), the edge of the world for the native-lane
// bench: it speaks the routes the adapter's serve lane (src/adapters/qwen-code/serve/) uses, with no
// agent behind them. `{ sessions: string[] }` are the sessions it hosts; it answers `{ url }`
// once it listens. Every shape below was observed on the pinned 0.24.4 daemon
// (`qwen serve --no-web --require-auth` against the loopback mock model, 2026-12-02: a session,
// a prompt whose shell call waited, one mid-turn message), trimmed to the fields named here:
// - `GET /capabilities` → `{v, qwenCodeVersion, mode: "http-bridge", features, workspaceCwd, …}`
//   (also in the daemon's docs, bundled/qc-helper/docs/qwen-serve.md); the lane reads workspaceCwd.
// - `GET /workspaces/:cwd/sessions/live-state` → `{v, catalogVersion, sessions: [{sessionId,
//   clientCount, hasActivePrompt, activeWorkState: "idle" | "active", isWaitingForPermission,
//   isWaitingForUserQuestion}]}`; the lane reads `sessionId`.
// - `GET /session/:id/events`: SSE frames `id: N`, `event: TYPE`, `data: {id, v: 1, type,
//   promptId?, data, _meta: {serverTimestamp}}`, the whole envelope on one line (the docs'
//   "Subscribe to the event stream" too); `Last-Event-ID` replays what came after it.
// - A turn's start: `session_update` under the prompt's id, `data: {sessionId, update:
//   {sessionUpdate: "user_message_chunk", content: {type: "text", text}, _meta: {source:
//   "bridge-echo"}}}`, the daemon's echo of the prompt.
// - `GET /session/:id/turns/current` → `{sessionId, state: "idle"}`, or `{sessionId, state:
//   "running", promptId, promptText, queuedAt, startedAt}`.
// - `POST /session/:id/mid-turn-message {message, messageId}` → 200 `{accepted: true,
//   messageId}` in a turn (the same id and text again: the same answer, injected once),
//   200 `{accepted: false, reason: "session_idle"}` with none; another text under a known id
//   gets `{accepted: false}` (native-lanes.md, "Observed on the pinned binaries").
// - The receipt: `mid_turn_message_injected` under the turn's prompt id, `data: {sessionId,
//   messages, messageIds, items}`. The daemon sends it at the turn's next model request; here it
//   follows the answer at once, so the figure is the adapter's and the lane's own time.
// `POST /bench/turn?session=S` (the bench's own route, never the lane's) starts a turn.
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { answer, argOf, serveUntilStopped } from '../lib/proc.js';

const WORKSPACE = '/home/dev/project';
const RING = 256;

interface Session {
  id: string;
  seq: number;
  ring: string[];
  streams: Set<ServerResponse>;
  turn?: { promptId: string; promptText: string; queuedAt: number; startedAt: number };
  messages: Map<string, string>;
}

const arg = argOf<{ sessions: string[] }>();
const sessions = new Map<string, Session>(
  arg.sessions.map((id) => [id, { id, seq: 0, ring: [], streams: new Set(), messages: new Map() }]),
);
let prompts = 0;

/** One frame to every open stream of the session, kept in its ring for a reconnect. */
function emit(s: Session, type: string, data: Record<string, unknown>, promptId?: string): void {
  const id = ++s.seq;
  const envelope = {
    id,
    v: 1,
    type,
    ...(promptId === undefined ? {} : { promptId }),
    data: { sessionId: s.id, ...data },
    _meta: { serverTimestamp: Date.now() },
  };
  const frame = `id: ${id}\nevent: ${type}\ndata: ${JSON.stringify(envelope)}\n\n`;
  s.ring.push(frame);
  if (s.ring.length > RING) s.ring.shift();
  for (const res of s.streams) res.write(frame);
}

const json = (res: ServerResponse, status: number, body: unknown): void => {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
};

const server = createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://x');
  const parts = url.pathname.split('/').map(decodeURIComponent);
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (d: string) => (body += d));
  req.on('end', () => {
    const s = parts[1] === 'session' ? sessions.get(parts[2] ?? '') : undefined;
    const route = `${req.method} ${parts[1] === 'session' ? `/session/:id/${parts.slice(3).join('/')}` : url.pathname}`;
    if (route === 'GET /capabilities')
      return json(res, 200, {
        v: 1,
        qwenCodeVersion: '0.24.4',
        mode: 'http-bridge',
        features: ['health', 'capabilities', 'session_create'],
        workspaceCwd: WORKSPACE,
      });
    if (req.method === 'GET' && parts[1] === 'workspaces' && parts[3] === 'sessions' && parts[4] === 'live-state')
      return json(res, 200, {
        v: 1,
        catalogVersion: { generation: 'bench', revision: 1 },
        sessions: [...sessions.values()].map((x) => ({
          sessionId: x.id,
          clientCount: x.streams.size,
          hasActivePrompt: x.turn !== undefined,
          activeWorkState: x.turn === undefined ? 'idle' : 'active',
          isWaitingForPermission: false,
          isWaitingForUserQuestion: false,
        })),
      });
    if (route === 'POST /bench/turn') {
      const t = sessions.get(url.searchParams.get('session') ?? '');
      if (t === undefined) return json(res, 404, { error: 'no such session' });
      const promptId = `bench-prompt-${prompts++}`;
      const promptText = 'run the slow command';
      const now = Date.now();
      t.turn = { promptId, promptText, queuedAt: now, startedAt: now };
      emit(
        t,
        'session_update',
        {
          update: {
            sessionUpdate: 'user_message_chunk',
            content: { type: 'text', text: promptText },
            _meta: { serverTimestamp: now, source: 'bridge-echo' },
          },
        },
        promptId,
      );
      return json(res, 200, { promptId });
    }
    if (parts[1] === 'session' && s === undefined)
      return json(res, 404, { error: 'session not found', sessionId: parts[2] });
    if (s === undefined) return json(res, 404, { error: 'not found' });
    if (route === 'GET /session/:id/events') {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      // The client's stream is open once the head arrives, before any frame.
      res.flushHeaders();
      const after = Number(req.headers['last-event-id'] ?? NaN);
      if (Number.isFinite(after)) {
        const first = s.seq - s.ring.length + 1;
        for (let i = Math.max(after + 1, first); i <= s.seq; i += 1) res.write(s.ring[i - first]!);
      }
      s.streams.add(res);
      res.on('close', () => s.streams.delete(res));
      return;
    }
    if (route === 'GET /session/:id/turns/current')
      return json(res, 200, {
        sessionId: s.id,
        ...(s.turn === undefined ? { state: 'idle' } : { state: 'running', ...s.turn }),
      });
    if (route === 'POST /session/:id/mid-turn-message') {
      let m: { message?: unknown; messageId?: unknown };
      try {
        m = JSON.parse(body) as typeof m;
      } catch {
        return json(res, 400, { error: 'invalid JSON' });
      }
      const text = String(m.message ?? '');
      const id = String(m.messageId ?? '');
      if (s.turn === undefined) return json(res, 200, { accepted: false, reason: 'session_idle' });
      const had = s.messages.get(id);
      if (had !== undefined && had !== text) return json(res, 200, { accepted: false });
      json(res, 200, { accepted: true, messageId: id });
      // The same id and text is injected once (native-lanes.md): a resend gets no second receipt.
      if (had === undefined) {
        s.messages.set(id, text);
        emit(s, 'mid_turn_message_injected', { messages: [text], messageIds: [id], items: [{}] }, s.turn.promptId);
      }
      return;
    }
    return json(res, 404, { error: 'not found' });
  });
});

await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
answer({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
serveUntilStopped(async () => {
  for (const s of sessions.values()) for (const r of s.streams) r.destroy();
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});
