// JSON-RPC 2.0 with `Content-Length` framing, as Copilot CLI's headless server speaks it on its
// stdio (`copilot --headless --stdio`; its SDK's transport): calls, answers, notifications.
import type { Readable, Writable } from 'node:stream';

export interface CopilotRpc {
  call(method: string, params: unknown, timeoutMs?: number): Promise<unknown>;
  /** Resolves once, when the server's output ends. */
  readonly closed: Promise<void>;
}

/** A JSON-RPC error answer: the server's own message. */
class CopilotRpcError extends Error {}

/** Splits the byte stream into framed messages (headers, a blank line, then Content-Length bytes). */
export function frameReader(onMessage: (m: Record<string, unknown>) => void): (chunk: Buffer) => void {
  let buf = Buffer.alloc(0);
  return (chunk) => {
    buf = Buffer.concat([buf, chunk]);
    for (;;) {
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const length = /content-length:\s*(\d+)/i.exec(buf.subarray(0, end).toString('ascii'));
      if (length === null) {
        buf = buf.subarray(end + 4);
        continue;
      }
      const total = end + 4 + Number(length[1]);
      if (buf.length < total) return;
      const body = buf.subarray(end + 4, total).toString('utf8');
      buf = buf.subarray(total);
      try {
        const m = JSON.parse(body) as unknown;
        if (m !== null && typeof m === 'object') onMessage(m as Record<string, unknown>);
      } catch {
        // A malformed message is skipped; the next frame still parses.
      }
    }
  };
}

export const frame = (m: unknown): string => {
  const body = JSON.stringify(m);
  return `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
};

/**
 * A client on the server's stdio. Notifications go to `onNotification`; a request from the server
 * goes to `onRequest`, whose result (or thrown error) is the answer.
 */
export function copilotRpc(
  input: Readable,
  output: Writable,
  onNotification: (method: string, params: Record<string, unknown>) => void,
  onRequest: (method: string, params: Record<string, unknown>) => Promise<unknown>,
): CopilotRpc {
  let next = 0;
  const pending = new Map<number, { ok: (v: unknown) => void; fail: (e: Error) => void; timer: NodeJS.Timeout }>();
  const send = (m: unknown): void => {
    if (output.writable) output.write(frame(m));
  };
  output.on('error', () => undefined);
  let done: () => void = () => undefined;
  const closed = new Promise<void>((r) => (done = r));
  input.on(
    'data',
    frameReader((m) => {
      const params = (m.params ?? {}) as Record<string, unknown>;
      if (typeof m.method === 'string') {
        if (m.id === undefined || m.id === null) return onNotification(m.method, params);
        const id = m.id;
        onRequest(m.method, params).then(
          (result) => send({ jsonrpc: '2.0', id, result: result ?? null }),
          (err: unknown) => send({ jsonrpc: '2.0', id, error: { code: -32601, message: String(err) } }),
        );
        return;
      }
      const p = typeof m.id === 'number' ? pending.get(m.id) : undefined;
      if (p === undefined) return;
      pending.delete(m.id as number);
      clearTimeout(p.timer);
      const err = m.error as { message?: unknown } | undefined;
      if (err !== undefined && err !== null) p.fail(new CopilotRpcError(String(err.message ?? 'error')));
      else p.ok(m.result);
    }),
  );
  input.on('close', () => {
    for (const p of pending.values()) {
      clearTimeout(p.timer);
      p.fail(new CopilotRpcError('the Copilot server is gone'));
    }
    pending.clear();
    done();
  });
  return {
    call(method, params, timeoutMs = 30_000) {
      const id = ++next;
      return new Promise((ok, fail) => {
        const timer = setTimeout(() => {
          pending.delete(id);
          fail(new CopilotRpcError(`${method}: no answer in ${timeoutMs} ms`));
        }, timeoutMs);
        pending.set(id, { ok, fail, timer });
        send({ jsonrpc: '2.0', id, method, params });
      });
    },
    closed,
  };
}
