// D45: the spawn verb of the consumer core. The command goes to the vendor adapter's home session
// (found on the roster), and its ack is the answer: `control.accepted` names the new session (and
// the worktree made for it), `control.rejected` says why not. A resend inside the wait is the same
// command, which the adapter answers once.
import { command as buildCommand } from '../protocol/build.js';
import { SPAWN_PARENT_ATTR } from '../protocol/types.js';
import type { RelayConsumer } from './connection.js';
import { senderOf } from './connect.js';
import type { Sender } from './verb.js';

export interface SpawnRequest {
  vendor: string;
  cwd: string;
  prompt: string;
  /** `true`: a worktree on a new branch; a string: the branch to make. */
  worktree?: boolean | string;
  model?: string;
  /** The home session to send to, where more than one adapter of the vendor spawns. */
  home?: string;
  /** The spawner's own session, which the relay verifies against what the sender claims (D45). */
  parent?: string;
  timeoutMs: number;
}

export type SpawnOutcome =
  | { outcome: 'spawned'; command: string; home: string; session: string; cwd?: string; worktree?: string }
  | { outcome: 'rejected'; command: string; home: string; reason: string; code?: string; detail?: string }
  | { outcome: 'refused'; code: string; detail?: string; by: 'relay' | 'roster'; command?: string; home?: string }
  | { outcome: 'timeout'; command: string; home: string }
  | { outcome: 'unreachable'; detail: string };

/** The prefix of every home session of a vendor (`aep-home-<vendor>-<host>`, src/streams/home.ts). */
const homePrefix = (vendor: string): string => `aep-home-${vendor}-`;

/** The home session a spawn goes to, or why there is none to take it. */
async function homeOf(
  consumer: RelayConsumer,
  vendor: string,
  named: string | undefined,
): Promise<{ home: string } | { code: string; detail: string }> {
  const homes = (await consumer.roster())
    .map((e) => e.session)
    .filter((s) => s.startsWith(homePrefix(vendor)) && (named === undefined || s === named));
  if (homes.length === 1) return { home: homes[0]! };
  if (homes.length === 0)
    return named === undefined
      ? {
          code: 'spawn-off',
          detail: `no ${vendor} adapter that spawns is connected: start one with \`aep-steer adapter ${vendor} --spawn-root DIR\``,
        }
      : { code: 'no-route', detail: `no live connection claims the home session ${named}` };
  return {
    code: 'ambiguous',
    detail: `${homes.length} ${vendor} adapters spawn (${homes.join(', ')}): name one with --home`,
  };
}

/** Sends one spawn and returns its answer: the new session, or why not. */
export async function sendSpawn(consumer: RelayConsumer, f: Sender, req: SpawnRequest): Promise<SpawnOutcome> {
  const found = await homeOf(consumer, req.vendor, req.home);
  if ('code' in found) return { outcome: 'refused', by: 'roster', code: found.code, detail: found.detail };
  const home = found.home;
  const cmd = buildCommand({ agent: senderOf(consumer, f) }, home, {
    type: `x.${req.vendor}.control.spawn`,
    capture: 'redacted', // the prompt is instruction-class text
    ...(req.parent === undefined ? {} : { extensions: { [SPAWN_PARENT_ATTR]: req.parent } }),
    data: {
      prompt: req.prompt,
      cwd: req.cwd,
      ...(req.worktree === undefined ? {} : { worktree: req.worktree }),
      ...(req.model === undefined ? {} : { model: req.model }),
      ...(f.surface === undefined ? {} : { surface: f.surface }),
    },
  });
  // A worker may take seconds to start: one long window, and a resend of the same id after it.
  const windowMs = Math.max(1, Math.min(req.timeoutMs, 45_000));
  const s = await consumer.send(cmd, { timeoutMs: windowMs, retries: req.timeoutMs > windowMs ? 1 : 0 });
  const base = { command: cmd.id, home };
  switch (s.outcome) {
    case 'timeout':
      return { outcome: 'timeout', ...base };
    case 'refused':
      return { outcome: 'refused', by: 'relay', ...base, code: s.code, ...(s.detail ? { detail: s.detail } : {}) };
    case 'rejected':
      return {
        outcome: 'rejected',
        ...base,
        reason: s.reason,
        ...(s.code === undefined ? {} : { code: s.code }),
        ...(s.detail ? { detail: s.detail } : {}),
      };
    case 'accepted': {
      const d = s.ack.data ?? {};
      const str = (k: string): string | undefined => (typeof d[k] === 'string' ? (d[k] as string) : undefined);
      const session = str('session');
      if (session === undefined) return { outcome: 'timeout', ...base };
      const cwd = str('cwd');
      const worktree = str('worktree');
      return {
        outcome: 'spawned',
        ...base,
        session,
        ...(cwd === undefined ? {} : { cwd }),
        ...(worktree === undefined ? {} : { worktree }),
      };
    }
  }
}
