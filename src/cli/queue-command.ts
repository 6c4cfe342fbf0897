// `aep-steer queue`: what still waits in one session's queue (D32), in its order (D44): position,
// id, text version, sender, delivery, age, and the text where the token is served it; with a
// verb flag it edits, moves, promotes, pauses, resumes or clears instead (queue-change.ts).
import type { Command } from 'commander';
import type { Paint } from '../audit/paint.js';
import type { QueueState } from '../consumer/queue.js';
import { age } from './pending-command.js';
import { asksChange, QUEUE_EXIT, runQueueChange, type QueueChangeFlags } from './queue-change.js';
import { relayVerb, runListing, timeoutFlag, sessionVerb } from './relay-options.js';
import type { Listing, SessionVerb } from './relay-options.js';

export { QUEUE_EXIT };

type Listed = Listing<{ session: string } & QueueState>;

export function describeQueue(o: Listed, p: Paint): string {
  if (o.outcome === 'unreachable') return `${p.red('✗')} ${o.detail}`;
  const head = o.paused ? [p.yellow(`paused: nothing but a steer is delivered (resume with --resume)`)] : [];
  if (o.waiting.length === 0) return [...head, `nothing waits in session ${o.session}`].join('\n');
  const rows = o.waiting.map(
    (w) =>
      `${p.dim(`#${w.position}`)}  ${p.bold(w.id)}  ${p.dim(`v${w.version}`)}  ${w.sender ?? '?'}  ${p.blue(w.delivery)}  ${p.dim(age(w.ageMs))}  ${w.text ?? p.dim("(text not shown at this token's capture)")}`,
  );
  return [...head, ...rows].join('\n');
}

export async function runQueue(
  f: QueueChangeFlags,
  io: { out: NodeJS.WritableStream & { isTTY?: boolean }; err?: NodeJS.WritableStream },
): Promise<number> {
  if (asksChange(f)) {
    const err = io.err ?? process.stderr;
    const timeoutMs = timeoutFlag('queue', f.timeout ?? '30000', err);
    if (timeoutMs === undefined) return QUEUE_EXIT.usage;
    return runQueueChange(f, { out: io.out, err }, timeoutMs);
  }
  const { sessionQueueState } = await import('../consumer/queue.js');
  return runListing(f, io.out, QUEUE_EXIT, describeQueue, async (consumer) => ({
    session: f.session,
    ...(await sessionQueueState(consumer, f.session)),
  }));
}

const QUEUE_VERB: SessionVerb = {
  name: 'queue',
  description:
    'list what waits in a session, in order (position, id, version, sender, delivery, age, text); or change it',
  session: 'the session',
  exits:
    '\nExit codes: 0 listed or changed, 2 usage, 3 rejected (not the sender, unknown id, no longer waiting, bad text\nor place), 4 refused, 5 already delivered, 6 timeout, 7 relay unreachable, 8 token refused.',
};

export function registerQueue(program: Command): void {
  const cmd = sessionVerb(program, QUEUE_VERB)
    .option('--edit <id>', 'replace the text of a waiting instruction, keeping its place (with --text)')
    .option('--text <text>', 'the new text for --edit')
    .option('--move <id>', 'move a waiting instruction (with --before <id> or --to front|back)')
    .option('--before <id>', 'for --move: put it just before this waiting instruction')
    .option('--to <end>', 'for --move: front or back')
    .option('--promote <id>', 'deliver a waiting instruction as a steer into the running turn now')
    .option('--start', 'for --promote: while no turn runs, start one with it where a lane can')
    .option('--pause', 'deliver nothing from the queue until --resume (a steer still goes in)')
    .option('--resume', 'deliver the queue again, in its order')
    .option('--clear', 'withdraw each of your instructions that wait')
    .option('--vendor <token>', "vendor token of the verb (default: the claimant's agent)")
    .option('--granted', "change another sender's instruction on this token's withdraw grant")
    .option('--timeout <ms>', 'give up waiting for the answer after this long', '30000')
    .option('--json', 'print one JSON object: the listing {outcome, session, paused, waiting: [...]}, or the outcome');
  relayVerb(cmd, QUEUE_VERB.exits, runQueue);
}
