// The security suite's world: a real relay in tokens-file mode (a real tokens file, mode 600, a
// real SQLite file), an adapter-like target on the real relay link with an `emit` identity, a
// steering user with command rights, a watch-only token, and a second emitter identity that
// could be a rogue adapter install on the same machine.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { command } from '../../src/protocol/build.js';
import type { AepCommand, CaptureLevel } from '../../src/protocol/envelope.js';
import { loadTokensFile } from '../../src/relay/acl.js';
import { RelayConsumer } from '../../src/consumer/connection.js';
import type { RelayHandle, RelayOptions } from '../../src/relay/server.js';
import { testRelay } from '../support/relay-store.js';
import { startTestTarget, type TestTarget } from '../support/relay-target.js';
import { WsPeer } from '../support/relay-harness.js';

export const AGENT = 'claude-code';
export const INSTRUCT = `x.${AGENT}.control.instruct`;

export const TOKENS = {
  adapter: 'adapter-token-0123456789',
  alice: 'alice-token-0123456789',
  watcher: 'watcher-token-0123456789',
  rogue: 'rogue-token-0123456789',
  auditor: 'auditor-token-0123456789',
} as const;

/** The tokens file the suite's relays load, exactly as an operator writes it. */
export const TOKENS_FILE = {
  tokens: [
    { token: TOKENS.adapter, identity: 'cc-adapter', emit: [AGENT] },
    { token: TOKENS.alice, identity: 'alice', commands: ['x.*.control.instruct', 'control.attention.respond'] },
    { token: TOKENS.watcher, identity: 'watcher' },
    { token: TOKENS.rogue, identity: 'rogue', emit: [AGENT] },
    // Watch-only with its own ceiling: trusted to read instruction text, never to steer.
    { token: TOKENS.auditor, identity: 'auditor', capture: 'redacted' },
  ],
};

export function writeTokensFile(mode = 0o600): string {
  const dir = mkdtempSync(join(tmpdir(), 'aep-security-'));
  const file = join(dir, 'tokens.json');
  writeFileSync(file, JSON.stringify(TOKENS_FILE), { mode });
  return file;
}

export async function tokensRelay(extra: Partial<RelayOptions> = {}): Promise<RelayHandle> {
  const file = writeTokensFile();
  return testRelay({
    port: 0,
    storePath: join(mkdtempSync(join(tmpdir(), 'aep-security-store-')), 'relay.db'),
    tokens: loadTokensFile(file),
    ...extra,
  });
}

/** The adapter: claims `sessions` on the real relay link, acks every instruct, never delivers by itself. */
export const adapter = (relay: RelayHandle, sessions: string[], token: string = TOKENS.adapter): Promise<TestTarget> =>
  startTestTarget({ url: relay.socketUrl, token, agent: AGENT, accepts: [INSTRUCT], sessions });

export const consumer = (relay: RelayHandle, token: string, agent = 'aep-steer'): Promise<RelayConsumer> =>
  RelayConsumer.connect({ url: relay.socketUrl, token, agent });

/** An instruct as `aep-steer instruct` builds it; `capture` as the sender declares (or not). */
export function instruct(
  session: string,
  text: string,
  opts: { agent?: string; capture?: CaptureLevel | null } = {},
): AepCommand {
  const capture = opts.capture === undefined ? 'redacted' : opts.capture;
  return command({ agent: opts.agent ?? 'alice', host: 'alice-laptop' }, session, {
    type: INSTRUCT,
    data: { text },
    ...(capture === null ? {} : { capture }),
  });
}

/** A raw WebSocket peer holding `token`, greeted as `role`. */
export const peer = (
  relay: RelayHandle,
  token: string,
  role: 'emitter' | 'consumer' | 'both' = 'both',
  agent: string = AGENT,
): Promise<WsPeer> => WsPeer.greet(relay.socketUrl, { role, identity: { agent } }, token);

/** Waits until the relay's roster shows `session` claimed (the claim travels on another socket). */
export async function claimed(c: RelayConsumer, session: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if ((await c.roster()).some((e) => e.session === session)) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`session ${session} never showed up in the roster`);
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
