// What the relay consumer commands (instruct, respond, sessions, watch) share: the relay flags and
// their environment defaults, duration flags, and printing one outcome as a line or as JSON.
import type { Command } from 'commander';
import { SteeringError } from '../protocol/errors.js';
import { DEFAULT_RELAY, DEFAULT_SENDER, withConsumer, type ConsumerTarget } from '../consumer/connect.js';
import type { RelayConsumer } from '../consumer/connection.js';
import { paintFor, type Paint } from '../audit/paint.js';
import { CLI_VOICE } from '../consumer/next-step.js';

/** The relay flags are the consumer's target: relay URL, token and sender name. */
export type RelayFlags = ConsumerTarget;

/** Flags every consumer command shares; environment values are read when the command is registered. */
export function addRelayOptions(
  cmd: Command,
  env: NodeJS.ProcessEnv = process.env,
  sender: string = DEFAULT_SENDER,
): Command {
  return (
    cmd
      // An empty variable counts as unset (D21).
      .option(
        '--relay <url>',
        'relay WebSocket URL, or several relay nodes comma-separated (AEP_RELAY)',
        env['AEP_RELAY'] || DEFAULT_RELAY,
      )
      .option(
        '--token <token>',
        'bearer token for the relay (AEP_TOKEN; default for a loopback relay: the local token in AEP_STATE_DIR/token)',
        env['AEP_TOKEN'] || undefined,
      )
      .option(
        '--sender <name>',
        "sender identity carried as the command's agent (a tokens-file token always sends as its own identity)",
        sender,
      )
  );
}

/**
 * A consumer command's last part: the relay flags, what its exit codes mean (said after the help),
 * and its action, whose result is the process's exit code.
 */
export function relayAction<A extends unknown[]>(
  cmd: Command,
  exitHelp: string,
  run: (...args: A) => Promise<number>,
): void {
  addRelayOptions(cmd)
    .addHelpText('after', exitHelp)
    .action(async (...args: A) => {
      process.exitCode = await run(...args);
    });
}

/** Where a verb writes: its outcome to `out` (painted on a terminal), its usage errors to `err`. */
export type VerbIo = { out: NodeJS.WritableStream & { isTTY?: boolean }; err: NodeJS.WritableStream };

/** A verb on one session: its name, what it does, what its `--session <id>` names, and its exit codes' help. */
export interface SessionVerb {
  name: string;
  description: string;
  session: string;
  exits: string;
}

export function sessionVerb(program: Command, v: SessionVerb): Command {
  return program.command(v.name).description(v.description).requiredOption('--session <id>', v.session);
}

/** `unreachableExit` for a verb on one session: the outcome names the session. */
export function sessionUnreachable(
  print: (o: { outcome: 'unreachable'; session: string; detail: string }) => void,
  exits: { unreachable: number; unauthorized: number },
  session: string,
): (detail: string, code?: string) => number {
  return unreachableExit(print, exits, (detail) => ({ outcome: 'unreachable' as const, session, detail }));
}

/** `relayAction` for a verb run on its flags with the process's own streams. */
export function relayVerb<F>(
  cmd: Command,
  exitHelp: string,
  run: (f: F, io: { out: NodeJS.WriteStream; err: NodeJS.WriteStream }) => Promise<number>,
): void {
  relayAction(cmd, exitHelp, (f: F) => run(f, { out: process.stdout, err: process.stderr }));
}

export function parseMs(name: string, v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1)
    throw new SteeringError('CONFIG_INVALID', `${name} must be a whole number of milliseconds >= 1, got "${v}"`);
  return n;
}

/** `--timeout` in milliseconds, or undefined once the reason is on stderr (the verb exits with its usage code). */
export function timeoutFlag(verb: string, value: string, err: NodeJS.WritableStream): number | undefined {
  try {
    return parseMs('--timeout', value);
  } catch (e) {
    err.write(`${verb}: ${(e as Error).message}\n`);
    return undefined;
  }
}

/**
 * A relay that could not be reached, or that refused the token: the outcome printed, and the
 * verb's exit code for it (a refused token was reached: another fix, another code).
 */
export function unreachableExit<O>(
  print: (o: O) => void,
  exits: { unreachable: number; unauthorized: number },
  outcome: (detail: string) => O,
): (detail: string, code?: string) => number {
  return (detail, code) => {
    // A refused token's detail already says where the token came from and how to give another.
    const refused = code === 'RELAY_UNAUTHORIZED';
    print(outcome(refused ? detail : `${detail}; ${CLI_VOICE.relayDown}`));
    return refused ? exits.unauthorized : exits.unreachable;
  };
}

/** Prints outcomes as one JSON object a line under --json, else as painted text (colour only on a terminal). */
export function outcomePrinter<O>(
  json: boolean | undefined,
  out: NodeJS.WritableStream & { isTTY?: boolean },
  describe: (o: O, p: Paint) => string,
): { paint: Paint; print: (o: O) => void } {
  const paint = json ? paintFor({}) : paintFor(out);
  return { paint, print: (o) => out.write(json ? `${JSON.stringify(o)}\n` : `${describe(o, paint)}\n`) };
}

/** What a listing command prints: what it listed, or why the relay could not be asked. */
export type Listing<L> = ({ outcome: 'listed' } & L) | { outcome: 'unreachable'; detail: string };

/**
 * A listing command's run: what `list` reads on the relay, printed (exit `listed`), or the relay
 * that could not be reached (its own exits, as `unreachableExit` tells them apart).
 */
export function runListing<L extends object>(
  f: RelayFlags & { json?: boolean },
  out: NodeJS.WritableStream & { isTTY?: boolean },
  exits: { listed: number; unreachable: number; unauthorized: number },
  describe: (o: Listing<L>, p: Paint) => string,
  list: (consumer: RelayConsumer) => Promise<L>,
): Promise<number> {
  const { print } = outcomePrinter<Listing<L>>(f.json, out, describe);
  return withConsumer(
    f,
    async (consumer) => {
      print({ outcome: 'listed', ...(await list(consumer)) });
      return exits.listed;
    },
    unreachableExit(print, exits, (detail) => ({ outcome: 'unreachable' as const, detail })),
  );
}
