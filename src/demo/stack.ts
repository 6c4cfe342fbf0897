// The embedded default stack, in one process: a relay (SQLite store, loopback) and the Claude
// Code adapter linked to it. The demo runs on it; so do the consumer commands' tests.
import { join } from 'node:path';
import { newSecret } from '../protocol/secret.js';
import { surfaceFor } from '../adapters/registry.js';
import { SteeringError } from '../protocol/errors.js';
import type { AepEvent } from '../protocol/envelope.js';
import type { RelayConsumer } from '../consumer/connection.js';
import { connectRelay } from '../relay/ws-connection.js';
import { startRelay, type RelayHandle } from '../relay/server.js';
import { acceptsFor, startAdapter, type AdapterHandle } from '../streams/run.js';

export interface Stack {
  relay: RelayHandle;
  adapter: AdapterHandle;
  /** `ws://127.0.0.1:{port}/socket` */
  relayUrl: string;
  token: string;
  /** The hook URL's secret path segment (D15), for writing vendor settings. */
  secret: string;
  hookUrl: string;
  logPath: string;
  /** Posts one hook input as Claude Code's HTTP hook would; resolves with the reply body. */
  postHook(input: Record<string, unknown>): Promise<{ status: number; body: unknown }>;
  close(): Promise<void>;
}

export interface StackOptions {
  /** Directory for the relay store and the adapter log. */
  dir: string;
  relayPort?: number;
  hookPort?: number;
  /** AEP_INSTRUCT (D5); on unless false. */
  instruct?: boolean;
  token?: string;
  /** Run the relay without a token: observation open, every command refused `unauthorized` (aep-wire §3.8). */
  watchOnly?: boolean;
  vendor?: string;
  /** A tokens file the relay serves beside the shared token (the adapter's); its parties steer with their own. */
  tokensFile?: string;
  /** Keep the relay history in memory instead of `dir/relay.db`. */
  memory?: boolean;
  attentionTimeoutMs?: number;
  onError?: (e: SteeringError) => void;
}

const portTaken = (err: unknown): boolean => {
  const code = (err as { code?: unknown } | undefined)?.code;
  return code === 'EADDRINUSE' || code === 'PORT_IN_USE';
};

export async function startStack(opts: StackOptions): Promise<Stack> {
  const token = opts.token ?? newSecret(32);
  const vendor = opts.vendor ?? 'claude-code';
  const surface = surfaceFor(vendor);
  if (!surface) throw new SteeringError('CONFIG_INVALID', `unknown vendor "${vendor}"`);
  const report = opts.onError ?? (() => {});
  let relay: RelayHandle;
  try {
    relay = await startRelay({
      port: opts.relayPort ?? 0,
      ...(opts.watchOnly ? {} : { token }),
      ...(opts.tokensFile ? { tokensFile: opts.tokensFile } : {}),
      storePath: opts.memory ? ':memory:' : join(opts.dir, 'relay.db'),
    });
  } catch (err) {
    if (portTaken(err))
      throw new SteeringError(
        'PORT_IN_USE',
        `relay port ${opts.relayPort} on 127.0.0.1 is taken; move it with --relay-port`,
        { cause: err },
      );
    throw err;
  }
  const instruct = opts.instruct ?? true;
  const link = connectRelay({
    url: relay.socketUrl,
    token,
    agent: surface.token,
    accepts: acceptsFor(surface, instruct),
    ...(instruct && surface.deliveries !== undefined ? { deliveries: surface.deliveries } : {}),
    onError: report,
  });
  const logPath = join(opts.dir, `${vendor}.jsonl`);
  const secret = newSecret(32);
  let adapter: AdapterHandle;
  try {
    adapter = await startAdapter({
      surface,
      port: opts.hookPort ?? 0,
      secret,
      logPath,
      instruct,
      relay: link,
      onError: report,
      ...(opts.attentionTimeoutMs === undefined ? {} : { attentionTimeoutMs: opts.attentionTimeoutMs }),
    });
  } catch (err) {
    await link.close();
    await relay.close();
    if (portTaken(err))
      throw new SteeringError('PORT_IN_USE', `hook port ${opts.hookPort} on 127.0.0.1 is taken; move it with --port`, {
        cause: err,
      });
    throw err;
  }
  await link.ready();
  return {
    relay,
    adapter,
    relayUrl: relay.socketUrl,
    token,
    secret,
    hookUrl: adapter.hookUrl,
    logPath,
    async postHook(input) {
      const res = await fetch(adapter.hookUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(input),
      });
      const text = await res.text();
      return { status: res.status, body: text === '' ? undefined : (JSON.parse(text) as unknown) };
    },
    async close() {
      await adapter.close(); // closes the relay link too
      await relay.close();
    },
  };
}

/** Every event a consumer sees on the whole stream, kept in arrival order. */
export interface EventRecord {
  seen: AepEvent[];
  /** Resolves with the first event matching `test`, already seen or still to come. */
  waitFor(test: (e: AepEvent) => boolean): Promise<AepEvent>;
}

export async function recordEvents(consumer: RelayConsumer): Promise<EventRecord> {
  const seen: AepEvent[] = [];
  const waiters: { test: (e: AepEvent) => boolean; resolve: (e: AepEvent) => void }[] = [];
  await consumer.subscribe(
    { filter: {} },
    {
      onEvent: (e) => {
        seen.push(e);
        for (const w of [...waiters]) {
          if (!w.test(e)) continue;
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(e);
        }
      },
    },
  );
  const waitFor = (test: (e: AepEvent) => boolean) =>
    new Promise<AepEvent>((resolve) => {
      const hit = seen.find(test);
      if (hit) resolve(hit);
      else waiters.push({ test, resolve });
    });
  return { seen, waitFor };
}
