// JSON-RPC 2.0 over the WebSocket a Codex app-server speaks on its Unix socket
// (`codex app-server --listen unix://PATH`; native-lanes.md "Observed": WebSocket, not JSON lines).
import WebSocket from 'ws';
import { recordShape } from '../../../protocol/wire-shapes.js';

interface RpcError {
  code: number;
  message: string;
}

/** A request the server sent this client (an approval), answered with `respond`. */
export interface ServerRequest {
  id: number | string;
  method: string;
  params: Record<string, unknown>;
}

export interface RpcClient {
  call(method: string, params: unknown, timeoutMs?: number): Promise<unknown>;
  notify(method: string, params?: unknown): void;
  respond(id: number | string, result: unknown): void;
  /** Resolves once when the connection is gone, with why. */
  readonly closed: Promise<string>;
  close(): void;
}

/** Thrown by `call` for a JSON-RPC error answer: the server's own code and message. */
export class RpcFailure extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** A call that could not be answered: the connection is down or the server did not answer in time. */
export class RpcUnreachable extends Error {}

export function connectRpc(
  socketPath: string,
  onNotification: (method: string, params: Record<string, unknown>) => void,
  onRequest: (r: ServerRequest) => void,
): Promise<RpcClient> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws+unix://${socketPath}:/`);
    let next = 0;
    const pending = new Map<number, { ok: (v: unknown) => void; fail: (e: Error) => void; timer: NodeJS.Timeout }>();
    let open = false;
    let said: (why: string) => void = () => undefined;
    const closed = new Promise<string>((r) => (said = r));
    const fail = (why: string): void => {
      for (const p of pending.values()) {
        clearTimeout(p.timer);
        p.fail(new RpcUnreachable(why));
      }
      pending.clear();
      said(why);
    };
    ws.on('message', (data) => {
      let m: Record<string, unknown>;
      try {
        m = JSON.parse(String(data)) as Record<string, unknown>;
      } catch {
        return;
      }
      recordShape('codex app-server', m.method ?? 'reply', m);
      const params = (m.params ?? {}) as Record<string, unknown>;
      if (typeof m.method === 'string') {
        if (m.id !== undefined && m.id !== null) onRequest({ id: m.id as number | string, method: m.method, params });
        else onNotification(m.method, params);
        return;
      }
      const p = typeof m.id === 'number' ? pending.get(m.id) : undefined;
      if (p === undefined) return;
      pending.delete(m.id as number);
      clearTimeout(p.timer);
      const err = m.error as RpcError | undefined;
      if (err !== undefined) p.fail(new RpcFailure(err.code, String(err.message)));
      else p.ok(m.result);
    });
    ws.on('open', () => {
      open = true;
      resolve({
        call(method, params, timeoutMs = 10_000) {
          if (ws.readyState !== WebSocket.OPEN) return Promise.reject(new RpcUnreachable('connection closed'));
          const id = ++next;
          return new Promise((ok, failCall) => {
            const timer = setTimeout(() => {
              pending.delete(id);
              failCall(new RpcUnreachable(`${method}: no answer in ${timeoutMs} ms`));
            }, timeoutMs);
            pending.set(id, { ok, fail: failCall, timer });
            ws.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
          });
        },
        notify(method, params) {
          if (ws.readyState === WebSocket.OPEN)
            ws.send(JSON.stringify({ jsonrpc: '2.0', method, ...(params === undefined ? {} : { params }) }));
        },
        respond(id, result) {
          if (ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ jsonrpc: '2.0', id, result }));
        },
        closed,
        close: () => ws.close(),
      });
    });
    ws.on('error', (err) => {
      if (!open) reject(err);
      fail(String(err.message));
    });
    ws.on('close', (code) => fail(`connection closed (${code})`));
  });
}
