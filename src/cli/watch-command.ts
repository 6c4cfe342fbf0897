// `aep-steer watch`: follows the relay stream as readable lines (or JSON lines), with an
// attr-match filter (AEP-0003 §6), a session shortcut and a capture ceiling per subscription.
import type { Command } from 'commander';
import { CAPTURE_LEVELS, type AepEvent, type CaptureLevel } from '../protocol/envelope.js';
import { SteeringError } from '../protocol/errors.js';
import { compileFilter } from '../protocol/filter.js';
import type { RelayConsumer } from '../consumer/connection.js';
import { FrameError } from '../protocol/errors.js';
import { paintFor, type Paint } from '../audit/paint.js';
import { connectConsumer } from '../consumer/connect.js';
import { backoffDelay, retrying, SeenOnce } from '../consumer/follow.js';
import { relayAction, type RelayFlags } from './relay-options.js';

export const WATCH_EXIT = { ok: 0, usage: 2, unreachable: 7, unauthorized: 8 } as const;

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** A short summary of what an event says, from metadata and whatever text the capture level let through. */
export function summarize(e: AepEvent): string {
  const d = (e.data ?? {}) as Record<string, unknown>;
  if (/\.control\.instruct$/.test(e.type))
    return str(d['text']) !== undefined
      ? JSON.stringify(d['text'])
      : `(text withheld at capture ${e.capture ?? 'metadata'})`;
  if (/\.instruction\.delivered$/.test(e.type))
    return typeof d['queued_ms'] === 'number' ? `after ${d['queued_ms']} ms` : '';
  if (/\.instruction\.dropped$/.test(e.type)) return str(d['reason']) ?? '';
  switch (e.type) {
    case 'control.rejected':
      return `${str(d['reason']) ?? ''}${str(d['detail']) ? `: ${str(d['detail'])}` : ''}`;
    // The request id is what `respond --request` takes; its ends name it as their subject.
    case 'attention.requested':
      return `${str(d['kind']) ?? ''}${str(d['prompt']) ? `: ${str(d['prompt'])}` : ''}  request ${e.id}`;
    case 'attention.answered':
      return `${JSON.stringify(d['answer'] ?? {})}${str(d['via']) === 'oob' ? ' at the agent' : ''} for ${e.subject ?? '?'}`;
    case 'attention.resolved':
      return `${str(d['resolution']) ?? ''} ${e.subject ?? '?'}`;
    case 'attention.timeout':
      return `${e.subject ?? '?'}`;
    case 'control.attention.respond':
      return JSON.stringify(d['answer'] ?? {});
    case 'session.ended':
      return str(d['reason']) ?? '';
    default: {
      const tool = d['tool'] as { name?: unknown } | undefined;
      return typeof tool?.name === 'string' ? tool.name : '';
    }
  }
}

function colourOf(type: string, p: Paint): (s: string) => string {
  if (/\.instruction\.delivered$/.test(type) || type === 'control.accepted') return p.green;
  if (
    /\.instruction\.dropped$/.test(type) ||
    type === 'control.rejected' ||
    type.startsWith('error.') ||
    type.endsWith('.failed')
  )
    return p.red;
  if (/\.control\./.test(type) || type.startsWith('control.')) return p.yellow;
  if (type.startsWith('attention.')) return p.blue;
  return (s) => s;
}

export function formatLine(e: AepEvent, p: Paint): string {
  const time = e.time.length >= 23 ? e.time.slice(11, 23) : e.time;
  const summary = summarize(e);
  const cause = e.cause ? p.dim(` ← ${e.cause}`) : '';
  return `${p.dim(time)}  ${e.session ?? '-'}  ${p.dim(e.agent)}  ${colourOf(e.type, p)(e.type)}${summary ? `  ${summary}` : ''}${cause}`;
}

export interface WatchRequest {
  filter: Record<string, unknown>;
  capture?: CaptureLevel;
  replay?: boolean;
  /** Show this many of the most recent matching events the relay still holds, then go live. */
  history?: number;
  limit?: number;
  json?: boolean;
}

/** The flags of `watch` that say what to follow, as the command line gives them. */
interface WatchChoice {
  filter?: string;
  session?: string;
  capture?: string;
  replay?: boolean;
  history?: string;
  limit?: string;
  json?: boolean;
}

/** Parses --filter, --session and --capture into one subscription; a usage error names what is wrong. */
export function watchRequest(f: WatchChoice): WatchRequest | { error: string } {
  let filter: Record<string, unknown> = {};
  if (f.filter !== undefined) {
    try {
      filter = JSON.parse(f.filter) as Record<string, unknown>;
    } catch (err) {
      return { error: `--filter is not JSON: ${(err as Error).message}` };
    }
  }
  if (f.session !== undefined) {
    if (
      filter &&
      typeof filter === 'object' &&
      !Array.isArray(filter) &&
      filter['session'] !== undefined &&
      filter['session'] !== f.session
    ) {
      return { error: '--session conflicts with the session in --filter' };
    }
    filter = { ...filter, session: f.session };
  }
  try {
    compileFilter(filter); // fail closed before connecting (AEP-0003 §6)
  } catch (err) {
    return { error: `invalid filter: ${(err as Error).message}` };
  }
  const req: WatchRequest = { filter };
  if (f.capture !== undefined) {
    if (!(CAPTURE_LEVELS as readonly string[]).includes(f.capture))
      return { error: `--capture must be one of ${CAPTURE_LEVELS.join(', ')}` };
    req.capture = f.capture as CaptureLevel;
  }
  if (f.limit !== undefined) {
    const n = Number(f.limit);
    if (!Number.isInteger(n) || n < 1) return { error: '--limit must be a whole number >= 1' };
    req.limit = n;
  }
  if (f.history !== undefined) {
    const n = Number(f.history);
    if (!Number.isInteger(n) || n < 1) return { error: '--history must be a whole number >= 1' };
    if (f.replay) return { error: '--history and --replay both choose the history: give one' };
    req.history = n;
  }
  if (f.replay) req.replay = true;
  if (f.json) req.json = true;
  return req;
}

/** Streams events to `out` until the limit, the signal, or the relay closing. Resolves with the exit code. */
export interface WatchIo {
  out: NodeJS.WritableStream & { isTTY?: boolean };
  err: NodeJS.WritableStream;
  /** Called once the relay confirmed the subscription: from here on nothing matching is missed. */
  onReady?: () => void;
  /** Called each time a lost connection is back and resubscribed. */
  onReconnected?: () => void;
}

export interface WatchOptions {
  /** Opens a connection; called again after each loss. */
  connect: () => Promise<RelayConsumer>;
  /** Delay before the n-th reconnect attempt (default 250 ms doubling to 2 s). */
  backoffMs?: (attempt: number) => number;
}

const defaultBackoff = (attempt: number): number => backoffDelay(attempt, 2000);

/**
 * Follows the stream on one connection after another: a lost relay is reconnected and the
 * subscription resumed from the relay's history, so events sent while it was away still show;
 * each event is printed once, keyed on `(source, id)`.
 */
export async function watchStream(
  first: RelayConsumer,
  req: WatchRequest,
  io: WatchIo,
  signal?: AbortSignal,
  opts?: WatchOptions,
): Promise<number> {
  const p = req.json ? paintFor({}) : paintFor(io.out);
  const seen = new SeenOnce();
  const startedAt = Date.now();
  let printed = 0;
  let finished = false;
  let resolveDone!: (code: number) => void;
  const done = new Promise<number>((resolve) => (resolveDone = resolve));
  const finish = (code: number): void => {
    if (finished) return;
    finished = true;
    resolveDone(code);
  };
  const print = (e: AepEvent, raw: string): void => {
    if (finished || !seen.add(e)) return;
    if (req.limit !== undefined && printed >= req.limit) return;
    printed += 1;
    io.out.write(req.json ? `${raw}\n` : `${formatLine(e, p)}\n`);
    if (req.limit !== undefined && printed >= req.limit) finish(WATCH_EXIT.ok);
  };
  if (signal?.aborted) finish(WATCH_EXIT.ok);
  signal?.addEventListener('abort', () => finish(WATCH_EXIT.ok), { once: true });

  let consumer = first;
  let sub: { close(): void } | undefined;
  /** Subscribes on `consumer`; `resumed` asks the relay for what was sent while we were away. */
  const follow = async (resumed: boolean): Promise<boolean> => {
    const session = typeof req.filter['session'] === 'string' ? req.filter['session'] : undefined;
    const wantsHistory = req.replay || req.history !== undefined || resumed;
    const from = !wantsHistory ? undefined : session !== undefined ? [{ session }] : ('all' as const);
    // History arrives right after `subscribed`; a round trip after it marks its end (same socket, in order).
    let replaying = req.history !== undefined && !resumed;
    const held: [AepEvent, string][] = [];
    try {
      sub = await consumer.subscribe(
        { filter: req.filter, ...(req.capture ? { capture: req.capture } : {}), ...(from ? { from } : {}) },
        {
          onEvent: (e, raw) => {
            if (replaying) held.push([e, raw]);
            // After a reconnect only what happened since this watch began is news; older history was not asked for.
            else if (!resumed || req.replay || Date.parse(e.time) >= startedAt || e.seq === undefined) print(e, raw);
            else seen.add(e);
          },
          onExhausted: (s, earliest) => {
            io.err.write(
              `watch: history of ${s} starts at ${earliest.epoch}:${earliest.seq}; older events are gone from the relay\n`,
            );
          },
        },
      );
      if (replaying) {
        await consumer.roster();
        replaying = false;
        for (const [e, raw] of held.slice(-req.history!)) print(e, raw);
        for (const [e] of held.slice(0, -req.history!)) seen.add(e);
      }
      return true;
    } catch (err) {
      io.err.write(
        `watch: ${err instanceof FrameError ? `relay refused the subscription: ${err.message}` : (err as Error).message}\n`,
      );
      finish(err instanceof FrameError ? WATCH_EXIT.usage : WATCH_EXIT.unreachable);
      return false;
    }
  };

  if (!(await follow(false))) return done;
  io.onReady?.();
  const connect = opts?.connect;
  const backoff = opts?.backoffMs ?? defaultBackoff;
  const onLost = (): void => {
    if (finished) return;
    if (connect === undefined) {
      io.err.write('watch: relay connection closed\n');
      finish(WATCH_EXIT.unreachable);
      return;
    }
    io.err.write('watch: relay connection lost; reconnecting\n');
    retrying({
      attempt: async () => {
        consumer = await connect();
        if (finished) {
          await consumer.close();
          return;
        }
        consumer.onClose(onLost);
        if (await follow(true)) {
          io.err.write('watch: reconnected\n');
          io.onReconnected?.();
        }
      },
      delayMs: backoff,
      stopped: () => finished,
      isFinal: (err) => err instanceof SteeringError && err.code === 'RELAY_UNAUTHORIZED',
      onFinal: (err) => {
        io.err.write(`watch: ${(err as Error).message}\n`);
        finish(WATCH_EXIT.unauthorized);
      },
    });
  };
  consumer.onClose(onLost);
  const code = await done;
  sub?.close();
  if (consumer !== first) await consumer.close();
  return code;
}

interface WatchFlags extends RelayFlags, WatchChoice {}

export async function runWatch(
  f: WatchFlags,
  io: WatchIo,
  signal?: AbortSignal,
  backoffMs?: (attempt: number) => number,
): Promise<number> {
  const req = watchRequest(f);
  if ('error' in req) {
    io.err.write(`watch: ${req.error}\n`);
    return WATCH_EXIT.usage;
  }
  let consumer: RelayConsumer;
  try {
    consumer = await connectConsumer(f);
  } catch (err) {
    io.err.write(`watch: ${(err as Error).message}\n`);
    return err instanceof SteeringError && err.code === 'RELAY_UNAUTHORIZED'
      ? WATCH_EXIT.unauthorized
      : WATCH_EXIT.unreachable;
  }
  try {
    return await watchStream(consumer, req, io, signal, {
      connect: () => connectConsumer(f),
      ...(backoffMs ? { backoffMs } : {}),
    });
  } finally {
    await consumer.close();
  }
}

export function registerWatch(program: Command): void {
  const cmd = program
    .command('watch')
    .description('follow the relay stream live; reconnects when the relay goes away and shows what it missed')
    .option('--filter <json>', 'attr-match filter, e.g. \'{"type":"x.claude-code.*"}\'')
    .option('--session <id>', 'only this session (added to the filter)')
    .option('--capture <level>', 'capture ceiling for this subscription: none, metadata, redacted, full')
    .option('--replay', 'start with the history the relay still holds (from: all)')
    .option('--history <n>', 'start with the n most recent matching events the relay holds, then go live')
    .option('--limit <n>', 'exit after this many events')
    .option('--json', 'print each event as it arrived, one JSON object per line');
  relayAction(
    cmd,
    '\nColour only on a terminal and never with NO_COLOR set.\nEach event is printed once, keyed on (source, id), across reconnects.\nExit codes: 0 done (limit reached or interrupted), 2 usage or refused filter, 7 relay unreachable at start, 8 token refused.',
    (f: WatchFlags) => {
      const stop = new AbortController();
      process.once('SIGINT', () => stop.abort());
      process.once('SIGTERM', () => stop.abort());
      return runWatch(f, { out: process.stdout, err: process.stderr }, stop.signal);
    },
  );
}
