// `aep-steer stop --session S` (D45): ends one spawned worker while its adapter runs, settled on the
// worker's `session.ended` (its process gone; a worktree made for it is kept).
import type { Command } from 'commander';
import type { Paint } from '../audit/paint.js';
import type { StopOutcome } from '../consumer/stop.js';
import { outcomePrinter, relayAction, timeoutFlag, unreachableExit, type RelayFlags } from './relay-options.js';
import { SEND_EXIT } from './usage.js';

/** One exit code per outcome, so a script can branch without parsing. */
export const STOP_EXIT = { stopped: 0, ...SEND_EXIT } as const;

interface StopFlags extends RelayFlags {
  session: string;
  reason?: string;
  timeout: string;
  json?: boolean;
}

function describe(o: StopOutcome, p: Paint): string {
  switch (o.outcome) {
    case 'stopped':
      return `${p.green('✓')} session ${o.session} was stopped and its process is gone (session.ended ${o.ended}); a worktree made for it is kept`;
    case 'rejected':
      return `${p.red('✗')} not stopped (${o.code ?? o.reason}): ${o.detail ?? o.reason}`;
    case 'refused':
      return `${p.red('✗')} ${o.by === 'relay' ? 'the relay refused the stop' : 'no stop sent'} (${o.code}): ${o.detail ?? ''}`;
    case 'timeout':
      return o.stage === 'ack'
        ? `${p.yellow('…')} no ack from the session in time; nothing says it stopped: aep-steer watch --session ${o.session}`
        : `${p.yellow('…')} the stop is under way, but the session has not ended yet; aep-steer wait --session ${o.session} --for end follows it`;
    case 'unreachable':
      return `${p.red('✗')} ${o.detail}`;
  }
}

const exitOf = (o: StopOutcome): number =>
  o.outcome === 'refused' && o.code === 'unauthorized' ? STOP_EXIT.unauthorized : STOP_EXIT[o.outcome];

export async function runStop(
  f: StopFlags,
  io: { out: NodeJS.WritableStream & { isTTY?: boolean }; err: NodeJS.WritableStream },
): Promise<number> {
  const timeoutMs = timeoutFlag('stop', f.timeout, io.err);
  if (timeoutMs === undefined) return STOP_EXIT.usage;
  const { print } = outcomePrinter<StopOutcome>(f.json, io.out, describe);
  const [{ withConsumer }, { sendStop }] = await Promise.all([
    import('../consumer/connect.js'),
    import('../consumer/stop.js'),
  ]);
  return withConsumer(
    f,
    async (consumer) => {
      const o = await sendStop(consumer, f, {
        session: f.session,
        timeoutMs,
        ...(f.reason === undefined ? {} : { reason: f.reason }),
      });
      print(o);
      return exitOf(o);
    },
    unreachableExit(print, STOP_EXIT, (detail) => ({ outcome: 'unreachable' as const, session: f.session, detail })),
  );
}

export function registerStop(program: Command): void {
  const cmd = program
    .command('stop')
    .description(
      'end a session an adapter spawned (control.cancel, scope session): its process is stopped, a worktree kept',
    )
    .requiredOption('--session <id>', 'the spawned session')
    .option('--reason <text>', 'why, on the record')
    .option('--timeout <ms>', 'give up waiting for the session to end after this long', '30000')
    .option('--json', 'print the outcome as one JSON object');
  relayAction(
    cmd,
    '\nExit codes: 0 stopped, 2 usage, 3 rejected (not a running worker of its adapter, a stop under way), 4 refused\n(no adapter that spawns claims it), 6 timeout, 7 relay unreachable, 8 the relay refused the token or the stop\n(only its spawner or a holder of the spawn right may stop it).',
    (f: StopFlags) => runStop(f, { out: process.stdout, err: process.stderr }),
  );
}
