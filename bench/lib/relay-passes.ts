// One pass of each relay load against a freshly started server process: ingest → fan-out (rate,
// and the server's CPU per event from /proc) and the command round trip under a background
// stream (p50, p99). Shared by the relay figures and the SQLite binding comparison.
import { QUICK } from '../types.js';
import { quantile } from './stats.js';
import { childCpuMs, runLoad, type Child } from './proc.js';

const EVENTS = 20_000;
const SUBSCRIBERS = 2;
const WINDOW = 2_000;
export const COMMANDS = QUICK ? 100 : 300;
export const TOKEN = 'bench-token';
const TYPE = 'x.bench-target.control.instruct';

/** Starts a server, runs one load against it, stops it: every pass starts from a fresh process. */
async function once<R>(
  startServer: () => Promise<Child>,
  load: (socketUrl: string, server: Child) => Promise<R>,
): Promise<R> {
  const server = await startServer();
  try {
    return await load(server.ready.socketUrl as string, server);
  } finally {
    await server.stop();
  }
}

export type FanoutPass = { rate: number; main: number; all: number };

export const fanout = (start: () => Promise<Child>) => (): Promise<FanoutPass> =>
  once(start, async (url, server) => {
    const before = childCpuMs(server.proc.pid!);
    const r = await runLoad<{ rate: number }>('load/ws-fanout.ts', {
      url,
      token: TOKEN,
      events: EVENTS,
      subscribers: SUBSCRIBERS,
      window: WINDOW,
      session: 'bench-fanout',
    });
    const after = childCpuMs(server.proc.pid!);
    const perEvent = (k: 'all' | 'main') => (before && after ? ((after[k] - before[k]) * 1000) / EVENTS : NaN);
    return { rate: r.rate, main: perEvent('main'), all: perEvent('all') };
  });

/**
 * One run of the command load (bench/load/ws-command.ts): its round trips in ms. `background`:
 * another session streams events all along; `targetUrl`: the target's relay node when it is
 * not `url`; `bare`: the target is a server that forwards without the AEP handshake (the `ws`
 * broadcaster).
 */
export const commandRoundTrips = (
  url: string,
  opts: { background: boolean; targetUrl?: string; bare?: boolean },
): Promise<number[]> =>
  runLoad<{ ms: number[] }>('load/ws-command.ts', {
    url,
    ...(opts.targetUrl ? { targetUrl: opts.targetUrl } : {}),
    token: TOKEN,
    n: COMMANDS,
    warmup: 30,
    target: 'self',
    type: TYPE,
    session: 'bench-cmd',
    background: opts.background,
    bare: opts.bare === true,
  }).then((r) => r.ms);

/** The command round trip under a background stream (unless `quiet`), p50 and p99. */
export const commands =
  (start: () => Promise<Child>, bare: boolean, opts: { quiet?: boolean } = {}) =>
  (): Promise<{ p50: number; p99: number }> =>
    once(start, (url) =>
      commandRoundTrips(url, { bare, background: opts.quiet !== true }).then((ms) => ({
        p50: quantile(ms, 0.5),
        p99: quantile(ms, 0.99),
      })),
    );

export const fanoutWhat = `${EVENTS} events, 1 emitter socket, ${SUBSCRIBERS} subscriber sockets, at most ${WINDOW} in flight`;
