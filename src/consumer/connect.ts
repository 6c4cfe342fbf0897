import { SteeringError, type SteeringErrorCode } from '../protocol/errors.js';
import { tokenFor } from '../relay/local-token.js';
import { readTokenFile } from '../protocol/secret.js';

export { readTokenFile };
// Type only: the socket client (and `ws`) loads when a command connects, not when it parses flags.
import type { RelayConsumer } from './connection.js';

export const DEFAULT_RELAY = 'ws://127.0.0.1:8787/socket';
/** The sender identity on commands (`agent` of the command, AEP-0004 §2) unless --sender names another. */
export const DEFAULT_SENDER = 'aep-steer';

/** Where a consumer connects and the name its commands carry. */
export interface ConsumerTarget {
  relay: string;
  token?: string;
  sender: string;
}

/**
 * The command's `agent`: the identity the relay bound the token to (tokens file, D19), so the
 * audit names the real sender; else the configured sender name.
 */
export const senderOf = (consumer: RelayConsumer, f: { sender: string }): string =>
  consumer.principal?.bound ? consumer.principal.identity : f.sender;

export async function connectConsumer(f: ConsumerTarget): Promise<RelayConsumer> {
  // Zero-config: a loopback relay gets the local token when none is given.
  const token = tokenFor(f.relay, f.token);
  const { RelayConsumer } = await import('./connection.js');
  return RelayConsumer.connect({ url: f.relay, agent: f.sender, ...(token ? { token } : {}) });
}

/**
 * Runs `run` on a fresh connection and closes it after. A relay that cannot be reached, or that
 * fails the exchange, becomes the command's `unreachable` value with the error's message.
 */
export async function withConsumer<T>(
  f: ConsumerTarget,
  run: (consumer: RelayConsumer) => Promise<T>,
  unreachable: (detail: string, code?: SteeringErrorCode) => T,
): Promise<T> {
  let consumer: RelayConsumer;
  // The code tells a refused token (RELAY_UNAUTHORIZED) from a relay that is not there.
  const codeOf = (err: unknown) => (err instanceof SteeringError ? err.code : undefined);
  try {
    consumer = await connectConsumer(f);
  } catch (err) {
    return unreachable((err as Error).message, codeOf(err));
  }
  try {
    return await run(consumer);
  } catch (err) {
    return unreachable((err as Error).message, codeOf(err));
  } finally {
    await consumer.close();
  }
}
