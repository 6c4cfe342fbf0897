// `aep-steer wait` and `aep-steer read` (D45): an orchestrator follows a session it started until
// its turn ends, a request waits or it ends, and reads the turn's final answer at its capture.
import type { Command } from 'commander';
import { withConsumer } from '../consumer/connect.js';
import { CLI_TURN_VOICE, readSentence, waitSentence } from '../consumer/turn-words.js';
import type { ReadOutcome, WaitFor, WaitOutcome } from '../consumer/turns.js';
import { outcomePrinter, relayVerb, timeoutFlag, sessionVerb, sessionUnreachable } from './relay-options.js';
import type { RelayFlags, SessionVerb, VerbIo } from './relay-options.js';

/** One exit code per outcome, so a script can branch without parsing. */
export const WAIT_EXIT = {
  finished: 0,
  usage: 2,
  cancelled: 3,
  failed: 4,
  request: 5,
  timeout: 6,
  unreachable: 7,
  unauthorized: 8,
  ended: 9,
} as const;

const WAIT_VERB: SessionVerb = {
  name: 'wait',
  description: "wait until a session's turn ends, a request of it waits, or it ends (D45)",
  session: 'the session to follow',
  exits:
    '\nExit codes: 0 the turn finished, 2 usage, 3 the turn was cancelled, 4 the turn failed, 5 a request waits,\n6 timeout (still running), 7 relay unreachable, 8 the relay refused the token, 9 the session ended.',
};

const READ_VERB: SessionVerb = {
  name: 'read',
  description: "print a turn's final answer, as far as this token's capture allows (D45)",
  session: 'the session to read',
  exits:
    '\nExit codes: 0 read, 2 usage, 3 the turn still runs, 4 no such turn, 7 relay unreachable, 8 the relay refused the token.',
};

export const READ_EXIT = { read: 0, usage: 2, running: 3, noTurn: 4, unreachable: 7, unauthorized: 8 } as const;

const FOR: readonly WaitFor[] = ['turn-end', 'request', 'end'];

interface WaitFlags extends RelayFlags {
  session: string;
  for?: string;
  afterTurn?: string;
  timeoutMs: string;
  json?: boolean;
}

const waitExit = (o: WaitOutcome): number =>
  o.outcome === 'turn-ended' ? WAIT_EXIT[o.turn.ended ?? 'finished'] : WAIT_EXIT[o.outcome];

export async function runWait(f: WaitFlags, io: VerbIo): Promise<number> {
  const timeoutMs = timeoutFlag('wait', f.timeoutMs, io.err);
  if (timeoutMs === undefined) return WAIT_EXIT.usage;
  const wanted = (f.for ?? 'turn-end,request').split(',').map((s) => s.trim());
  const bad = wanted.find((w) => !(FOR as readonly string[]).includes(w));
  if (bad !== undefined) {
    io.err.write(`wait: --for takes ${FOR.join(', ')} (comma-separated), not "${bad}"\n`);
    return WAIT_EXIT.usage;
  }
  const after = f.afterTurn === undefined ? undefined : Number(f.afterTurn);
  if (after !== undefined && (!Number.isInteger(after) || after < 0)) {
    io.err.write(`wait: --after-turn takes a turn number (0 or more), not "${f.afterTurn}"\n`);
    return WAIT_EXIT.usage;
  }
  const { print } = outcomePrinter<WaitOutcome>(f.json, io.out, (o) => waitSentence(o, CLI_TURN_VOICE));
  const { waitFor } = await import('../consumer/turns.js');
  return withConsumer(
    f,
    async (consumer) => {
      const o = await waitFor(consumer, {
        session: f.session,
        for: wanted as WaitFor[],
        timeoutMs,
        ...(after === undefined ? {} : { afterTurn: after }),
      });
      print(o);
      return waitExit(o);
    },
    sessionUnreachable(print, WAIT_EXIT, f.session),
  );
}

interface ReadFlags extends RelayFlags {
  session: string;
  turn: string;
  json?: boolean;
}

export async function runRead(f: ReadFlags, io: VerbIo): Promise<number> {
  const turn = f.turn === 'last' ? 'last' : Number(f.turn);
  if (turn !== 'last' && (!Number.isInteger(turn) || turn < 1)) {
    io.err.write(`read: --turn takes "last" or a turn number from 1, not "${f.turn}"\n`);
    return READ_EXIT.usage;
  }
  const { print } = outcomePrinter<ReadOutcome>(f.json, io.out, readSentence);
  const { readTurn } = await import('../consumer/turns.js');
  return withConsumer(
    f,
    async (consumer) => {
      const o = await readTurn(consumer, { session: f.session, turn });
      print(o);
      if (o.outcome === 'no-turn') return READ_EXIT.noTurn;
      if (o.outcome === 'read' && o.turn.ended === undefined) return READ_EXIT.running;
      return o.outcome === 'read' ? READ_EXIT.read : READ_EXIT.unreachable;
    },
    sessionUnreachable(print, READ_EXIT, f.session),
  );
}

export function registerWait(program: Command): void {
  const wait = sessionVerb(program, WAIT_VERB)
    .option('--for <what>', `what ends the wait, comma-separated: ${FOR.join(', ')} (the end always does)`)
    .option('--after-turn <n>', 'count only a turn after this one (what an earlier wait printed)')
    .option('--timeout-ms <ms>', 'give up after this long and say it is still running', '600000')
    .option('--json', 'print the outcome as one JSON object');
  relayVerb(wait, WAIT_VERB.exits, runWait);
}

export function registerRead(program: Command): void {
  const read = sessionVerb(program, READ_VERB)
    .option('--turn <last|n>', 'the turn: the newest, or its number from 1', 'last')
    .option('--json', 'print the outcome as one JSON object');
  relayVerb(read, READ_VERB.exits, runRead);
}
