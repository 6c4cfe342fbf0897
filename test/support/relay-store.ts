// The relay suite runs against either store: SQLite (the default) or JetStream when
// AEP_TEST_STORE=nats. The JetStream server is the one named by AEP_TEST_NATS_URL (the suite's
// `scripts/with-nats.ts` starts it), or one started for this process and killed when it exits.
// Each relay gets its own namespace, so tests never see each other's streams.
import { createHash, randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { NatsStore } from '../../src/relay/nats/store.js';
import { startRelay, type RelayHandle, type RelayOptions } from '../../src/relay/server.js';
import { startNatsServer, type NatsServer } from './nats-server.js';

export const STORE_KIND: 'sqlite' | 'nats' = process.env.AEP_TEST_STORE === 'nats' ? 'nats' : 'sqlite';

let own: Promise<NatsServer> | undefined;

export async function natsUrl(): Promise<string> {
  if (process.env.AEP_TEST_NATS_URL) return process.env.AEP_TEST_NATS_URL;
  own ??= startNatsServer().then((s) => {
    // The server must not keep this process alive; it dies with it.
    s.proc.unref();
    for (const p of [s.proc.stdout, s.proc.stderr]) (p as unknown as { unref?: () => void } | null)?.unref?.();
    process.once('exit', () => {
      s.proc.kill('SIGKILL');
      rmSync(s.dir, { recursive: true, force: true });
    });
    return s;
  });
  return (await own).url;
}

/** A namespace per relay; a file path maps to a fixed one, so a second relay on it reopens the same history. */
const namespaceFor = (path: string | undefined): string =>
  path === undefined || path === ':memory:'
    ? `t${randomBytes(5).toString('hex')}`
    : `f${createHash('sha256').update(path).digest('hex').slice(0, 12)}`;

/** `startRelay` on the store this run tests. */
export async function testRelay(opts: RelayOptions = {}): Promise<RelayHandle> {
  if (STORE_KIND === 'sqlite' || opts.store !== undefined) return startRelay(opts);
  const store = await NatsStore.open({
    servers: await natsUrl(),
    namespace: namespaceFor(opts.storePath),
    ...(opts.bufferCap !== undefined ? { bufferCap: opts.bufferCap } : {}),
    ...(opts.sessionCap !== undefined ? { sessionCap: opts.sessionCap } : {}),
    leaseMs: 3000,
  });
  return startRelay({ ...opts, store });
}
