// `aep-steer sessions`: the relay's roster (AEP-0003 §4.1): the live sessions with their vendor,
// state, last activity and queue (D26; `--all` adds ended ones), and whether each can be steered
// (`x.{vendor}.control.instruct` in its claimant's accepts).
import type { Command } from 'commander';
import { paintFor, type Paint } from '../audit/paint.js';
import { rowsFrom, type SessionRow } from '../consumer/roster.js';
import { withConsumer } from '../consumer/connect.js';
import { addRelayOptions, type RelayFlags } from './relay-options.js';

export const SESSIONS_EXIT = { ok: 0, unreachable: 7, unauthorized: 8 } as const;

/** `12 s ago`, `4 min ago`, `2 h ago`: how long since the session last did something. */
export function ago(iso: string | undefined, now: number): string {
  const t = iso === undefined ? Number.NaN : Date.parse(iso);
  if (Number.isNaN(t)) return '-';
  const s = Math.max(0, Math.round((now - t) / 1000));
  if (s < 120) return `${s} s ago`;
  if (s < 7200) return `${Math.round(s / 60)} min ago`;
  if (s < 172_800) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86_400)} d ago`;
}

export function renderRows(rows: SessionRow[], p: Paint, opts: { all?: boolean; hiddenEnded?: number; now?: number } = {}): string {
  const now = opts.now ?? Date.now();
  const hint = opts.hiddenEnded ? p.dim(`${opts.hiddenEnded} ended session${opts.hiddenEnded === 1 ? '' : 's'} not shown (--all shows them)`) : '';
  if (rows.length === 0) return [p.dim(opts.all ? 'no sessions on the relay' : 'no live sessions on the relay'), hint].filter(Boolean).join('\n');
  const head = ['SESSION', 'VENDOR', 'STATE', 'LAST ACTIVITY', 'QUEUE', 'STEERING', 'ACCEPTS'];
  const body = rows.map((r) => [
    r.session + (r.claimants > 1 ? ` (${r.claimants} claimants)` : ''),
    `${r.agent ?? '?'}${r.instance ? `@${r.instance}` : ''}`,
    r.state,
    ago(r.lastEventAt, now),
    String(r.queued),
    r.instruct ? 'instruct' : 'off',
    r.accepts.join(', ') || '-',
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ');
  const lines = [p.bold(line(head)), ...body.map((b, i) => {
    const text = line(b);
    return rows[i]!.instruct ? text.replace(' instruct ', ` ${p.green('instruct')} `) : text;
  })];
  if (hint) lines.push(hint);
  return lines.join('\n');
}

export interface SessionsFlags extends RelayFlags {
  json?: boolean;
  all?: boolean;
}

export async function runSessions(f: SessionsFlags, io: { out: NodeJS.WritableStream & { isTTY?: boolean } }): Promise<number> {
  const rows = await withConsumer<SessionRow[] | { error: string; unauthorized: boolean }>(
    f, async (consumer) => rowsFrom(await consumer.roster()), (error, code) => ({ error, unauthorized: code === 'RELAY_UNAUTHORIZED' }),
  );
  if (!Array.isArray(rows)) {
    io.out.write(f.json ? `${JSON.stringify({ error: rows.error })}\n` : `✗ ${rows.error}\n`);
    return rows.unauthorized ? SESSIONS_EXIT.unauthorized : SESSIONS_EXIT.unreachable;
  }
  const shown = f.all ? rows : rows.filter((r) => r.state === 'live');
  io.out.write(f.json ? `${JSON.stringify(shown, null, 2)}\n` : `${renderRows(shown, paintFor(io.out), { all: f.all === true, hiddenEnded: rows.length - shown.length })}\n`);
  return SESSIONS_EXIT.ok;
}

export function registerSessions(program: Command): void {
  const cmd = program
    .command('sessions')
    .description('list live sessions on the relay: vendor, state, last activity, queued instructions, what each claimant declares')
    .option('--all', 'also list ended sessions (their adapter still claims them)')
    .option('--json', 'print the roster rows as JSON');
  addRelayOptions(cmd)
    .addHelpText('after', '\nExit codes: 0 listed, 2 usage, 7 relay unreachable, 8 token refused.')
    .action(async (f: SessionsFlags) => {
      process.exitCode = await runSessions(f, { out: process.stdout });
    });
}
