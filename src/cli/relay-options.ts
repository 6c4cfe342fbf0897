// What the relay consumer commands (instruct, respond, sessions, watch) share: the relay flags and
// their environment defaults, the connection, duration flags, and printing one outcome as a line
// or as JSON.
import type { Command } from 'commander';
import { SteeringError } from '../protocol/errors.js';
import { RelayConsumer } from '../relay/consumer.js';
import { paintFor, type Paint } from '../audit/paint.js';

export const DEFAULT_RELAY = 'ws://127.0.0.1:8787/socket';
/** The sender identity on commands (`agent` of the command, AEP-0004 §2) unless --sender names another. */
export const DEFAULT_SENDER = 'aep-steer';

export interface RelayFlags {
  relay: string;
  token?: string;
  sender: string;
}

/** Flags every consumer command shares; environment values are read when the command is registered. */
export function addRelayOptions(cmd: Command, env: NodeJS.ProcessEnv = process.env): Command {
  return cmd
    // An empty variable counts as unset (D21).
    .option('--relay <url>', 'relay WebSocket URL (AEP_RELAY)', env['AEP_RELAY'] || DEFAULT_RELAY)
    .option('--token <token>', 'bearer token for the relay (AEP_TOKEN); commands need one', env['AEP_TOKEN'] || undefined)
    .option('--sender <name>', 'sender identity carried as the command\'s agent (a tokens-file token always sends as its own identity)', DEFAULT_SENDER);
}

/**
 * The command's `agent`: the identity the relay bound the token to (tokens file, D19), so the
 * audit names the real sender; else `--sender`.
 */
export const senderOf = (consumer: RelayConsumer, f: Pick<RelayFlags, 'sender'>): string =>
  consumer.principal?.bound ? consumer.principal.identity : f.sender;

export async function connectConsumer(f: RelayFlags): Promise<RelayConsumer> {
  return RelayConsumer.connect({ url: f.relay, agent: f.sender, ...(f.token ? { token: f.token } : {}) });
}

/**
 * Runs `run` on a fresh connection and closes it after. A relay that cannot be reached, or that
 * fails the exchange, becomes the command's `unreachable` value with the error's message.
 */
export async function withConsumer<T>(f: RelayFlags, run: (consumer: RelayConsumer) => Promise<T>, unreachable: (detail: string) => T): Promise<T> {
  let consumer: RelayConsumer;
  try {
    consumer = await connectConsumer(f);
  } catch (err) {
    return unreachable((err as Error).message);
  }
  try {
    return await run(consumer);
  } catch (err) {
    return unreachable((err as Error).message);
  } finally {
    await consumer.close();
  }
}

export function parseMs(name: string, v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new SteeringError('CONFIG_INVALID', `${name} must be a whole number of milliseconds >= 1, got "${v}"`);
  return n;
}

/** Prints outcomes as one JSON object a line under --json, else as painted text (colour only on a terminal). */
export function outcomePrinter<O>(json: boolean | undefined, out: NodeJS.WritableStream & { isTTY?: boolean }, describe: (o: O, p: Paint) => string): { paint: Paint; print: (o: O) => void } {
  const paint = json ? paintFor({}) : paintFor(out);
  return { paint, print: (o) => out.write(json ? `${JSON.stringify(o)}\n` : `${describe(o, paint)}\n`) };
}
