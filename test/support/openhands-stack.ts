// The OpenHands bridge under test, all real parts on loopback: a Chat Completions mock, the
// stand-in agent server, a relay with its SQLite file, and `aep-steer adapter openhands` as the
// CLI builds it (adapterConfig + runAdapter), with an observer on the relay recording the stream.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { adapterConfig, runAdapter, type AdapterFlags, type RunningAdapter } from '../../src/cli/adapter-command.js';
import { recordEvents } from '../../src/demo/stack.js';
import type { AepEvent, SteeringError } from '../../src/protocol/index.js';
import { RelayConsumer } from '../../src/consumer/connection.js';
import { startRelay, type RelayHandle } from '../../src/relay/server.js';
import { startMockOpenAi, type MockOpenAi } from './mock-openai.js';
import { startOpenHandsServer, type StandIn, type StandInOptions } from './openhands-server.js';

export interface OpenHandsStack {
  dir: string;
  model: MockOpenAi;
  server: StandIn;
  relay: RelayHandle;
  token: string;
  bridge: RunningAdapter;
  /** Stops the bridge and starts a new one on the same log (a restart). */
  restartBridge(): Promise<void>;
  logPath: string;
  errors: SteeringError[];
  seen: AepEvent[];
  waitFor(test: (e: AepEvent) => boolean): Promise<AepEvent>;
  /** The session's events as the relay fanned them out, in order, each once. */
  session(id: string): AepEvent[];
  stop(): Promise<void>;
}

export interface OpenHandsStackOptions {
  server?: Partial<StandInOptions>;
  /** The key the bridge is given (defaults to the server's first key). */
  bridgeKey?: string;
  /** AEP_OPENHANDS_CONTROL. */
  control?: boolean;
  flags?: AdapterFlags;
  /** Runs against the server before the bridge starts (conversations it will first see mid-way). */
  beforeBridge?: (server: StandIn) => Promise<void>;
}

export async function startOpenHandsStack(o: OpenHandsStackOptions = {}): Promise<OpenHandsStack> {
  const dir = mkdtempSync(join(tmpdir(), 'aep-openhands-'));
  const token = 'openhands-test-token';
  const model = await startMockOpenAi();
  const keys = o.server?.keys ?? ['oh-key-0'];
  const server = await startOpenHandsServer({ modelUrl: model.baseUrl, ...o.server, keys });
  await o.beforeBridge?.(server);
  const relay = await startRelay({ port: 0, token, storePath: join(dir, 'relay.db') });
  const logPath = join(dir, 'openhands.jsonl');
  const env: NodeJS.ProcessEnv = {
    AEP_STATE_DIR: join(dir, 'state'),
    ...(o.control ? { AEP_OPENHANDS_CONTROL: '1' } : {}),
  };
  const key = o.bridgeKey ?? keys[0];
  const cfg = adapterConfig(
    'openhands',
    {
      port: '0',
      secret: 'openhands-test-secret-0123',
      log: logPath,
      relay: relay.socketUrl,
      token,
      server: server.url,
      poll: '0.05',
      ...(key === undefined ? {} : { serverKey: key }),
      ...o.flags,
    },
    env,
  );
  const errors: SteeringError[] = [];
  const onError = (e: SteeringError) => errors.push(e);
  const observer = await RelayConsumer.connect({ url: relay.socketUrl, token, agent: 'test-observer' });
  const { seen, waitFor } = await recordEvents(observer);
  const stack: OpenHandsStack = {
    dir,
    model,
    server,
    relay,
    token,
    bridge: await runAdapter(cfg, onError),
    logPath,
    errors,
    seen,
    waitFor,
    async restartBridge() {
      await stack.bridge.close();
      stack.bridge = await runAdapter(cfg, onError);
    },
    // Delivery is at least once: a redelivery (same source and id) is the same event.
    session: (id) => {
      const once = new Set<string>();
      return seen.filter((e) => {
        if (e.session !== id || once.has(`${e.source} ${e.id}`)) return false;
        once.add(`${e.source} ${e.id}`);
        return true;
      });
    },
    async stop() {
      await observer.close();
      await stack.bridge.close();
      await relay.close();
      await server.close();
      await model.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return stack;
}
