// The relay's SSE consume (`GET /stream`, AEP-0003 §3.3): a subscription from the query string,
// resumed from `from` or the `Last-Event-ID` header, replayed and then live (or replay only with
// `live=0`), one `event:`/`data:`/`id:` block per event.
import type { IncomingMessage } from 'node:http';
import { SubscribeError } from '../protocol/errors.js';
import type { Principal } from './acl.js';
import type { Connections } from './connections.js';
import type { RelayCore } from './core.js';
import { CORS, json, type Res } from './http-reply.js';
import type { Channel, Sink } from './hub.js';
import type { Position } from './session-store.js';
import { parseLastEventId, parseSubscription, positionId } from './subscription.js';

export async function stream(
  core: RelayCore,
  conns: Connections,
  req: IncomingMessage,
  res: Res,
  url: URL,
  viewer: Principal,
  token: string | undefined,
): Promise<void> {
  const q = url.searchParams;
  let spec: ReturnType<typeof parseSubscription>;
  let filter: unknown;
  try {
    let from: unknown;
    try {
      filter = q.has('filter') ? JSON.parse(q.get('filter')!) : undefined;
      from = q.get('from') === 'all' ? 'all' : q.has('from') ? JSON.parse(q.get('from')!) : undefined;
    } catch (err) {
      throw new SubscribeError('invalid-filter', `filter and from are URL-encoded JSON: ${(err as Error).message}`);
    }
    spec = parseSubscription({ filter, capture: q.get('capture') ?? undefined, from }, core.limits.maxFrom);
  } catch (err) {
    if (err instanceof SubscribeError) return json(res, 400, { error: err.code, detail: err.message });
    throw err;
  }
  if (spec.from === undefined) {
    const last = parseLastEventId(req.headers['last-event-id'] as string | undefined);
    if (last) spec.from = [last];
  }
  const live = q.get('live') !== '0';
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    ...res[CORS],
  });
  res.write(': connected\n\n');
  const channel: Channel = {
    pressure: () => res.writableLength,
    overflow: () => {
      // SSE has no closing frame: end the stream and let the consumer resume (AEP-0003 §8.4).
      res.end(': closing backpressure\n\n');
      conns.streams.delete(res);
    },
  };
  const sink: Sink = {
    sub: 'sse',
    channel,
    spec,
    delivered: new Map<string, Position>(),
    write: (text, e) => {
      const id = positionId(e);
      res.write(`event: ${e.type}\ndata: ${text}\n${id === undefined ? '' : `id: ${id}\n`}\n`);
    },
    exhausted: (session, p) => res.write(`: replay-exhausted ${session} ${p.epoch}:${p.seq}\n\n`),
  };
  const session = (filter as { session?: unknown } | undefined)?.session;
  const alsoSession = !live && typeof session === 'string' ? session : undefined;
  res.on('close', () => {
    core.hub.remove(sink);
    conns.dropStream(res);
  });
  conns.holdStream(res, token, viewer);
  await core.subscribe(sink, spec, { live, alsoSession, viewer });
  if (!live) {
    res.end(': replay-complete\n\n');
    return;
  }
  if (!res.writableEnded && !res.destroyed) conns.streams.add(res);
}
