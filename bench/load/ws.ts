// WebSocket client pieces shared by the relay load generators: AEP hello, subscribe, and frames
// counted as they arrive. Plain `ws`, so the same client drives this relay, the reference relay
// and the bare broadcaster.
import WebSocket from 'ws';

export interface Conn {
  ws: WebSocket;
  /** Resolves with the next frame (parsed) that `match` accepts. */
  waitFor(match: (m: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
}

export async function connect(url: string, token: string | undefined, hello: Record<string, unknown>): Promise<Conn> {
  const ws = new WebSocket(url, token ? { headers: { authorization: `Bearer ${token}` } } : {});
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  const waiters: { match: (m: Record<string, unknown>) => boolean; resolve: (m: Record<string, unknown>) => void }[] =
    [];
  ws.on('message', (data) => {
    if (waiters.length === 0) return;
    const m = JSON.parse(data.toString()) as Record<string, unknown>;
    const i = waiters.findIndex((w) => w.match(m));
    if (i !== -1) waiters.splice(i, 1)[0]!.resolve(m);
  });
  const conn: Conn = {
    ws,
    waitFor: (match) => new Promise((resolve) => waiters.push({ match, resolve })),
  };
  const greeted = conn.waitFor((m) => m.type === 'hello' || m.type === 'error');
  ws.send(JSON.stringify({ type: 'hello', versions: ['0.1'], ...hello }));
  const h = await greeted;
  if (h.type !== 'hello') throw new Error(`hello refused: ${JSON.stringify(h)}`);
  return conn;
}

export async function subscribe(c: Conn, id: string, filter: Record<string, unknown>): Promise<void> {
  const done = c.waitFor((m) => (m.type === 'subscribed' || m.type === 'error') && m.id === id);
  c.ws.send(JSON.stringify({ type: 'subscribe', id, filter }));
  const r = await done;
  if (r.type !== 'subscribed') throw new Error(`subscribe refused: ${JSON.stringify(r)}`);
}

export const close = (c: Conn): Promise<void> =>
  new Promise((resolve) => {
    if (c.ws.readyState === WebSocket.CLOSED) return resolve();
    c.ws.once('close', () => resolve());
    c.ws.close();
  });
