// One pass of an ingest load against a freshly started server process: several emitter
// processes (bench/load/ingest-emit.ts) start sending at the same moment, one subscriber process
// (bench/load/ingest-sink.ts) counts every event on each of its WebSocket or SSE subscribers. The
// rate is events received per subscriber per second, from the start signal to the last event;
// the server's CPU per event (its event-loop thread, and all its threads) is read from /proc over
// the same span, so a figure bounded by the load generators still shows what the server spends.
// Several servers (relay nodes on one NATS) take the emitters in turn; the subscribers are on the
// first, so events from the others reach them across nodes; CPU is then each node's and the sum.
import { childCpuMs, tsNode, type Child } from './proc.js';

export interface IngestLoad {
  /** Emitter processes, connections per process, events per connection. */
  procs: number;
  conns: number;
  events: number;
  mode: 'ws' | 'http';
  /** WebSocket and SSE subscribers. */
  ws: number;
  sse: number;
  /** Socket events ahead of the server's pong. */
  window?: number;
  /** Events per POST (NDJSON above 1). */
  batch?: number;
}

export type IngestPass = { rate: number; main: number; all: number };

export const loadWhat = (l: IngestLoad): string =>
  `${l.procs} emitter processes × ${l.conns} ${l.mode === 'ws' ? 'sockets' : `keep-alive connections (${(l.batch ?? 1) > 1 ? `NDJSON POSTs of ${l.batch} events` : 'one POST per event'})`} × ` +
  `${l.events} events, ${[l.ws ? `${l.ws} WebSocket` : '', l.sse ? `${l.sse} SSE` : ''].filter(Boolean).join(' + ')} ` +
  `subscribers in another process`;

/** Where a server of a pass listens. */
const urlsOf = (c: Child) => c.ready as { socketUrl: string; url: string };

/** `nodes`: the CPU per event of each server when the pass ran on several (their sum is `main`, `all`). */
export type NodesPass = IngestPass & { nodes: { main: number; all: number }[] };

export const ingestPass =
  (startServer: () => Promise<Child | Child[]>, load: IngestLoad, token: string) => async (): Promise<NodesPass> => {
    const started = await startServer();
    const servers = Array.isArray(started) ? started : [started];
    const children: Child[] = [];
    try {
      const { socketUrl, url } = urlsOf(servers[0]!);
      const total = load.procs * load.conns * load.events;
      const sink = await tsNode('load/ingest-sink.ts', {
        socketUrl,
        url,
        token,
        ws: load.ws,
        sse: load.sse,
        expect: total,
      });
      children.push(sink);
      const emitters = await Promise.all(
        Array.from({ length: load.procs }, (_, p) =>
          tsNode('load/ingest-emit.ts', {
            ...urlsOf(servers[p % servers.length]!),
            token,
            mode: load.mode,
            conns: load.conns,
            events: load.events,
            session: `bench-ingest-${p}`,
            window: load.window ?? 1000,
            batch: load.batch ?? 1,
          }),
        ),
      );
      children.push(...emitters);
      const before = servers.map((s) => childCpuMs(s.proc.pid!));
      const t0 = performance.now();
      for (const e of emitters) e.proc.kill('SIGUSR2');
      // An emitter that fails ends the pass with its error instead of leaving the sink waiting.
      const sent = Promise.all(emitters.map((e) => e.next()));
      await Promise.race([sink.next(), sent.then(() => new Promise((r) => setTimeout(r, 60_000)))]);
      const seconds = (performance.now() - t0) / 1000;
      const after = servers.map((s) => childCpuMs(s.proc.pid!));
      await sent;
      if (seconds >= 60) throw new Error(`ingest pass: the subscribers missed events a minute after the last was sent`);
      const perEvent = (i: number, k: 'all' | 'main') => {
        const b = before[i];
        const a = after[i];
        return b && a ? ((a[k] - b[k]) * 1000) / total : NaN;
      };
      const nodes = servers.map((_, i) => ({ main: perEvent(i, 'main'), all: perEvent(i, 'all') }));
      const sum = (k: 'all' | 'main') => nodes.reduce((t, n) => t + n[k], 0);
      return { rate: total / seconds, main: sum('main'), all: sum('all'), nodes };
    } finally {
      await Promise.all(children.map((c) => c.stop()));
      await Promise.all(servers.map((s) => s.stop()));
    }
  };
