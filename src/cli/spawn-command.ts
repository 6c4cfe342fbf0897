// `aep-steer spawn` (D45): start a worker session on a vendor adapter that spawns, and print its
// session id (and the worktree made for it), so a script can `wait` for its turn and `read` it.
import type { Command } from 'commander';
import type { SpawnOutcome } from '../consumer/spawn.js';
import { SEND_EXIT } from './usage.js';
import { outcomePrinter, relayAction, timeoutFlag, unreachableExit, type RelayFlags } from './relay-options.js';
import type { Paint } from '../audit/paint.js';

/** One exit code per outcome, so a script can branch without parsing. */
export const SPAWN_EXIT = { spawned: 0, ...SEND_EXIT, spawnOff: 9 } as const;

/** What `--help` says its exit codes mean. */
const SPAWN_EXITS =
  '\nExit codes: 0 spawned, 2 usage, 3 refused by the adapter (the code says why: cwd-outside-roots, spawn-cap, ...),\n4 refused by the relay, 6 timeout, 7 relay unreachable, 8 no spawn right or the token refused, 9 no adapter of the vendor spawns.';

interface SpawnFlags extends RelayFlags {
  vendor: string;
  cwd: string;
  worktree?: string | boolean;
  model?: string;
  home?: string;
  timeout: string;
  json?: boolean;
}

function describe(o: SpawnOutcome, p: Paint): string {
  switch (o.outcome) {
    case 'spawned':
      return [
        `${p.green('✓')} spawned session ${o.session}${o.worktree ? ` in the worktree ${o.worktree}` : ''}`,
        `  next: aep-steer wait --session ${o.session}, then aep-steer read --session ${o.session}`,
      ].join('\n');
    case 'rejected':
      return `${p.red('✗')} the adapter refused the spawn${o.code ? ` (${o.code})` : ''}: ${o.detail ?? o.reason}`;
    case 'refused':
      return `${p.red('✗')} ${o.by === 'relay' ? 'the relay refused the spawn' : 'no spawn sent'} (${o.code}): ${o.detail ?? ''}`;
    case 'timeout':
      return `${p.yellow('…')} no answer from the home session ${o.home} in time; it may still start: see aep-steer sessions --tree`;
    case 'unreachable':
      return `${p.red('✗')} ${o.detail}`;
  }
}

const exitOf = (o: SpawnOutcome): number =>
  o.outcome === 'refused' && o.code === 'spawn-off'
    ? SPAWN_EXIT.spawnOff
    : o.outcome === 'refused' && o.code === 'unauthorized'
      ? SPAWN_EXIT.unauthorized
      : SPAWN_EXIT[o.outcome];

export async function runSpawn(
  prompt: string,
  f: SpawnFlags,
  io: { out: NodeJS.WritableStream & { isTTY?: boolean }; err: NodeJS.WritableStream },
): Promise<number> {
  const timeoutMs = timeoutFlag('spawn', f.timeout, io.err);
  if (timeoutMs === undefined) return SPAWN_EXIT.usage;
  if (prompt.trim() === '') {
    io.err.write('spawn: give the worker its first prompt as the argument\n');
    return SPAWN_EXIT.usage;
  }
  const { print } = outcomePrinter<SpawnOutcome>(f.json, io.out, describe);
  const [{ withConsumer }, { sendSpawn }] = await Promise.all([
    import('../consumer/connect.js'),
    import('../consumer/spawn.js'),
  ]);
  return withConsumer(
    f,
    async (consumer) => {
      const o = await sendSpawn(consumer, f, {
        vendor: f.vendor,
        cwd: f.cwd,
        prompt,
        timeoutMs,
        ...(f.worktree === undefined ? {} : { worktree: f.worktree }),
        ...(f.model === undefined ? {} : { model: f.model }),
        ...(f.home === undefined ? {} : { home: f.home }),
      });
      print(o);
      return exitOf(o);
    },
    unreachableExit(print, SPAWN_EXIT, (detail) => ({ outcome: 'unreachable' as const, detail })),
  );
}

export function registerSpawn(program: Command): void {
  const cmd = program
    .command('spawn')
    .description('start a worker session on an adapter run with --spawn-root, and print its session id (D45)')
    .argument('<prompt>', "the worker's first prompt")
    .requiredOption('--vendor <token>', 'the vendor to start (codex, claude-code)')
    .requiredOption('--cwd <dir>', "the absolute directory to run in, under one of the adapter's --spawn-root")
    .option('--worktree [branch]', 'run in a new git worktree of --cwd (on BRANCH, or a new branch)')
    .option('--model <name>', "the worker's model")
    .option('--home <session>', 'the home session to ask, where more than one adapter of the vendor spawns')
    .option('--timeout <ms>', 'give up waiting for the answer after this long', '90000')
    .option('--json', 'print the outcome as one JSON object');
  relayAction(cmd, SPAWN_EXITS, (prompt: string, f: SpawnFlags) =>
    runSpawn(prompt, f, { out: process.stdout, err: process.stderr }),
  );
}
