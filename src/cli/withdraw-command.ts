// `aep-steer withdraw`: takes back an instruction that still waits (D32), settled on its
// `instruction.dropped {reason: withdrawn}`; a refusal says how the instruction stands instead.
import type { Command } from 'commander';
import type { Paint } from '../audit/paint.js';
import { refusedLine } from '../consumer/explain.js';
import { CLI_VOICE, refusalSentence } from '../consumer/next-step.js';
import type { WithdrawOutcome } from '../consumer/withdraw.js';
import { senderOf, withConsumer } from '../consumer/connect.js';
import { SEND_EXIT } from './usage.js';
import { relayVerb, outcomePrinter, timeoutFlag, unreachableExit, sessionVerb } from './relay-options.js';
import type { RelayFlags, SessionVerb, VerbIo } from './relay-options.js';

/** Exit codes of `withdraw`: the instruct table's, with 5 for one that reached the agent already. */
export const WITHDRAW_EXIT = { withdrawn: 0, ...SEND_EXIT, delivered: 5 } as const;

const WITHDRAW_VERB: SessionVerb = {
  name: 'withdraw',
  description: "take back an instruction that still waits in a session's queue",
  session: 'the session the instruction was sent to',
  exits:
    '\nExit codes: 0 withdrawn, 2 usage, 3 rejected (not the sender, unknown id, no longer waiting), 4 refused,\n5 already delivered, 6 timeout, 7 relay unreachable, 8 the relay refused the token.',
};

export function describeWithdraw(o: WithdrawOutcome, p: Paint): string {
  switch (o.outcome) {
    case 'withdrawn':
      return `${p.green('✓')} withdrawn: ${o.instruction} will not reach the agent (event ${o.dropped})`;
    case 'rejected':
      return `${p.red('✗')} not withdrawn (${o.code ?? o.reason}): ${refusalSentence(o.code, CLI_VOICE, { session: o.session, vendor: o.vendor })}`;
    case 'refused':
      return refusedLine(o, p);
    case 'timeout':
      return `${p.yellow('…')} timeout: no answer from the session; \`aep-steer queue --session ${o.session}\` shows whether it still waits`;
    case 'unreachable':
      return `${p.red('✗')} ${o.detail}`;
  }
}

interface WithdrawFlags extends RelayFlags {
  session: string;
  instruction?: string;
  last?: boolean;
  vendor?: string;
  granted?: boolean;
  json?: boolean;
  timeout: string;
}

export async function runWithdraw(f: WithdrawFlags, io: VerbIo): Promise<number> {
  const timeoutMs = timeoutFlag('withdraw', f.timeout, io.err);
  if (timeoutMs === undefined) return WITHDRAW_EXIT.usage;
  if ((f.instruction === undefined) === (f.last !== true)) {
    io.err.write('withdraw: give --instruction <id> (the command id instruct printed) or --last, not both\n');
    return WITHDRAW_EXIT.usage;
  }
  const { print } = outcomePrinter(f.json, io.out, describeWithdraw);
  const [{ sendWithdraw }, { sessionQueue, newestOf }] = await Promise.all([
    import('../consumer/withdraw.js'),
    import('../consumer/queue.js'),
  ]);
  return withConsumer(
    f,
    async (consumer) => {
      let instruction = f.instruction;
      if (instruction === undefined) {
        const sender = senderOf(consumer, f);
        instruction = newestOf(await sessionQueue(consumer, f.session), sender)?.id;
        if (instruction === undefined) {
          print({
            outcome: 'refused',
            session: f.session,
            instruction: '',
            code: 'unknown-instruction',
            by: 'roster',
            detail: `none of ${sender}'s instructions waits in session ${f.session}`,
          });
          return WITHDRAW_EXIT.refused;
        }
      }
      const o = await sendWithdraw(consumer, f, {
        session: f.session,
        instruction,
        timeoutMs,
        ...(f.vendor ? { vendor: f.vendor } : {}),
        ...(f.granted ? { granted: true } : {}),
      });
      print(o);
      if (o.outcome === 'rejected' && o.code === 'already-delivered') return WITHDRAW_EXIT.delivered;
      return WITHDRAW_EXIT[o.outcome];
    },
    unreachableExit(print, WITHDRAW_EXIT, (detail) => ({
      outcome: 'unreachable' as const,
      session: f.session,
      instruction: f.instruction ?? '',
      detail,
    })),
  );
}

export function registerWithdraw(program: Command): void {
  const cmd = sessionVerb(program, WITHDRAW_VERB)
    .option('--instruction <id>', "the instruction's command id (instruct prints it; `aep-steer queue` lists them)")
    .option('--last', 'your newest instruction still waiting in the session')
    .option('--vendor <token>', "vendor token of the verb x.<vendor>.control.withdraw (default: the claimant's agent)")
    .option(
      '--granted',
      'take back another sender\'s instruction on this token\'s withdraw grant (tokens file "withdraw")',
    )
    .option('--timeout <ms>', 'give up waiting for the answer after this long', '30000')
    .option('--json', 'print the outcome as one JSON object');
  relayVerb(cmd, WITHDRAW_VERB.exits, runWithdraw);
}
