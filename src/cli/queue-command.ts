// `aep-steer queue`: what still waits in one session's queue (D32): id, sender, delivery, age,
// and the text where the token is served it.
import type { Command } from 'commander';
import type { Paint } from '../audit/paint.js';
import type { WaitingInstruction } from '../consumer/queue.js';
import { age } from './pending-command.js';
import { relayAction, runListing, type Listing, type RelayFlags } from './relay-options.js';

export const QUEUE_EXIT = { listed: 0, usage: 2, unreachable: 7, unauthorized: 8 } as const;

type Listed = Listing<{ session: string; waiting: WaitingInstruction[] }>;

export function describeQueue(o: Listed, p: Paint): string {
  if (o.outcome === 'unreachable') return `${p.red('✗')} ${o.detail}`;
  if (o.waiting.length === 0) return `nothing waits in session ${o.session}`;
  return o.waiting
    .map(
      (w) =>
        `${p.bold(w.id)}  ${w.sender ?? '?'}  ${p.blue(w.delivery)}  ${p.dim(age(w.ageMs))}  ${w.text ?? p.dim("(text not shown at this token's capture)")}`,
    )
    .join('\n');
}

interface QueueFlags extends RelayFlags {
  session: string;
  json?: boolean;
}

export async function runQueue(
  f: QueueFlags,
  io: { out: NodeJS.WritableStream & { isTTY?: boolean } },
): Promise<number> {
  const { sessionQueue } = await import('../consumer/queue.js');
  return runListing(f, io.out, QUEUE_EXIT, describeQueue, async (consumer) => ({
    session: f.session,
    waiting: await sessionQueue(consumer, f.session),
  }));
}

export function registerQueue(program: Command): void {
  const cmd = program
    .command('queue')
    .description('list the instructions still waiting in a session: id, sender, delivery, age, text')
    .requiredOption('--session <id>', 'the session')
    .option('--json', 'print one JSON object: {outcome, session, waiting: [...]}');
  relayAction(
    cmd,
    '\nExit codes: 0 listed (an empty queue included), 2 usage, 7 relay unreachable, 8 token refused.',
    (f: QueueFlags) => runQueue(f, { out: process.stdout }),
  );
}
