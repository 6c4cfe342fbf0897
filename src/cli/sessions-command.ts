// `aep-steer sessions`: the relay's roster (AEP-0003 §4.1): the live sessions with their vendor,
// state (`stale` past the vendor's stale window, D37), working directory, title, last activity
// and queue (D26; `--all` adds ended ones, and from the relay's history those whose adapter is not
// connected), and whether each can be steered (`x.{vendor}.control.instruct` in its claimant's accepts).
import type { Command } from 'commander';
import { paintFor, type Paint } from '../audit/paint.js';
import { rowsFrom, type SessionRow } from '../consumer/roster.js';
import { withConsumer } from '../consumer/connect.js';
import { relayAction, type RelayFlags } from './relay-options.js';
import { treeRows } from './sessions-tree.js';

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

/** Live sessions, stale ones included: what `sessions` lists without `--all`. */
export const isShownByDefault = (r: SessionRow): boolean => r.state === 'live' || r.state === 'stale';

/** Long working directories keep their end, where the project's name is. */
const shortPath = (path: string | undefined, max = 40): string =>
  path === undefined ? '-' : path.length <= max ? path : `…${path.slice(-(max - 1))}`;

/** The START column: `yes` where a start would begin a turn, `busy` where one runs already. */
const startColumn = (r: SessionRow): string => (r.startable !== true ? '-' : r.running === true ? 'busy' : 'yes');

export interface RenderOptions {
  all?: boolean;
  hiddenEnded?: number;
  hiddenOffline?: number;
  now?: number;
}

export function renderRows(rows: SessionRow[], p: Paint, opts: RenderOptions = {}): string {
  const now = opts.now ?? Date.now();
  const plural = (n: number) => (n === 1 ? '' : 's');
  const hints = [
    opts.hiddenEnded ? `${opts.hiddenEnded} ended session${plural(opts.hiddenEnded)}` : '',
    opts.hiddenOffline
      ? `${opts.hiddenOffline} session${plural(opts.hiddenOffline)} whose adapter is not connected`
      : '',
  ].filter(Boolean);
  const hint = hints.length > 0 ? p.dim(`${hints.join(' and ')} not shown (--all shows them)`) : '';
  if (rows.length === 0)
    return [p.dim(opts.all ? 'no sessions on the relay' : 'no live sessions on the relay'), hint]
      .filter(Boolean)
      .join('\n');
  const head = [
    'SESSION',
    'VENDOR',
    'STATE',
    'LAST ACTIVITY',
    'QUEUE',
    'CWD',
    'TITLE',
    'STEERING',
    'LANES',
    'START',
    'ACCEPTS',
  ];
  const body = rows.map((r) => [
    r.session + (r.claimants > 1 ? ` (${r.claimants} claimants)` : ''),
    `${r.agent ?? '?'}${r.instance ? `@${r.instance}` : ''}`,
    r.state,
    ago(r.lastEventAt, now),
    String(r.queued),
    shortPath(r.cwd),
    r.title === undefined ? '-' : r.title.length > 40 ? `${r.title.slice(0, 39)}…` : r.title,
    r.instruct ? 'instruct' : 'off',
    r.lanes?.join(', ') || '-',
    // D43: where `instruct --start` can wake the session now; `busy` while a turn runs in it.
    startColumn(r),
    r.accepts.join(', ') || '-',
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ');
  const lines = [
    p.bold(line(head)),
    ...body.map((b, i) => {
      const text = line(b);
      return rows[i]!.instruct ? text.replace(' instruct ', ` ${p.green('instruct')} `) : text;
    }),
  ];
  if (hint) lines.push(hint);
  return lines.join('\n');
}

export interface SessionsFlags extends RelayFlags {
  json?: boolean;
  all?: boolean;
  /** D45: workers under the sessions that spawned them. */
  tree?: boolean;
}

export async function runSessions(
  f: SessionsFlags,
  io: { out: NodeJS.WritableStream & { isTTY?: boolean } },
): Promise<number> {
  const rows = await withConsumer<SessionRow[] | { error: string; unauthorized: boolean }>(
    // The offline entries come from the relay's history (D37): asked for always, so the default
    // listing can say how many it leaves out.
    f,
    async (consumer) => rowsFrom(await consumer.roster({ offline: true })),
    (error, code) => ({ error, unauthorized: code === 'RELAY_UNAUTHORIZED' }),
  );
  if (!Array.isArray(rows)) {
    io.out.write(f.json ? `${JSON.stringify({ error: rows.error })}\n` : `✗ ${rows.error}\n`);
    return rows.unauthorized ? SESSIONS_EXIT.unauthorized : SESSIONS_EXIT.unreachable;
  }
  const listed = f.all ? rows : rows.filter(isShownByDefault);
  const shown = f.tree === true && f.json !== true ? treeRows(listed) : listed;
  const hidden = (state: SessionRow['state']) => (f.all ? 0 : rows.filter((r) => r.state === state).length);
  const opts: RenderOptions = {
    all: f.all === true,
    hiddenEnded: hidden('ended'),
    hiddenOffline: hidden('adapter offline'),
  };
  io.out.write(f.json ? `${JSON.stringify(shown, null, 2)}\n` : `${renderRows(shown, paintFor(io.out), opts)}\n`);
  return SESSIONS_EXIT.ok;
}

export function registerSessions(program: Command): void {
  const cmd = program
    .command('sessions')
    .description(
      'list live sessions on the relay: vendor, state (live, stale), working directory, title, last activity, ' +
        'queued instructions, what each claimant declares',
    )
    .option('--all', "also list ended sessions, and those whose adapter is not connected (from the relay's history)")
    .option('--json', 'print the roster rows as JSON')
    .option('--tree', 'list each spawned session under the session that spawned it, naming its spawner (D45)');
  relayAction(cmd, '\nExit codes: 0 listed, 2 usage, 7 relay unreachable, 8 token refused.', (f: SessionsFlags) =>
    runSessions(f, { out: process.stdout }),
  );
}
