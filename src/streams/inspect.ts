// Live inspection of session actors through @statelyai/inspect. The inspector sends XState's
// inspection events over a WebSocket to a small relay on 127.0.0.1, where any WebSocket
// receiver (createWebSocketReceiver from @statelyai/inspect, or a plain client) reads them.
import { createServer } from 'node:http';
import { WebSocketServer, WebSocket } from 'ws';
import { createWebSocketInspector } from '@statelyai/inspect';
import type { InspectionEvent, Observer } from 'xstate';
import type { SessionContext } from '../machines/session-context.js';

export type InspectionOption = Observer<InspectionEvent> | ((e: InspectionEvent) => void);

export const DEFAULT_INSPECT_PORT = 8399;

export interface InspectorHandle {
  inspect: Observer<InspectionEvent>;
  /** Where receivers connect: `ws://127.0.0.1:{port}`. */
  url: string;
  port: number;
  stop(): Promise<void>;
}

/** Instruction text stays in the process: the inspector sees lengths, not content (D2 spirit). */
function sanitizeContext(ctx: Record<string, unknown>): Record<string, unknown> {
  const c = ctx as unknown as Partial<SessionContext>;
  if (!Array.isArray(c.queue)) return ctx;
  const hide = (items: SessionContext['queue']) => items.map((i) => ({ ...i, text: `[${i.text.length} chars]` }));
  return { ...ctx, queue: hide(c.queue), inFlight: (c.inFlight ?? []).map((b) => ({ ...b, items: hide(b.items) })) };
}

function sanitizeEvent(e: { type: string; [k: string]: unknown }): { type: string; [k: string]: unknown } {
  const cmd = e.command as { data?: { text?: unknown } } | undefined;
  if (cmd?.data && typeof cmd.data.text === 'string')
    return { ...e, command: { ...cmd, data: { ...cmd.data, text: `[${cmd.data.text.length} chars]` } } };
  return e;
}

/** Starts the loopback relay and an inspector connected to it. `port: 0` picks a free port. */
export async function createInspector(opts: { port?: number } = {}): Promise<InspectorHandle> {
  const server = createServer((_req, res) => {
    res.writeHead(426, { 'content-type': 'text/plain' }).end('connect with a WebSocket\n');
  });
  const wss = new WebSocketServer({ server });
  const backlog: string[] = [];
  wss.on('connection', function relayOnConnection(ws) {
    for (const m of backlog) ws.send(m);
    ws.on('message', function relayOnMessage(data) {
      const text = String(data);
      backlog.push(text);
      if (backlog.length > 500) backlog.shift();
      for (const other of wss.clients) if (other !== ws && other.readyState === WebSocket.OPEN) other.send(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(opts.port ?? DEFAULT_INSPECT_PORT, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : (opts.port ?? DEFAULT_INSPECT_PORT);
  const url = `ws://127.0.0.1:${port}`;
  const inspector = createWebSocketInspector({
    url,
    sanitizeContext: (c) => sanitizeContext(c as Record<string, unknown>),
    sanitizeEvent: (e) => sanitizeEvent(e as { type: string }),
  });
  return {
    inspect: inspector.inspect,
    url,
    port,
    stop: () =>
      new Promise<void>((resolve) => {
        inspector.stop();
        for (const c of wss.clients) c.terminate();
        wss.close();
        server.close(() => resolve());
      }),
  };
}
