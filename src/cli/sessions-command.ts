// `aep-steer sessions`: the relay's roster (AEP-0003 §4.1): who is live, what each claimant
// declares, and whether it can be steered (`x.{vendor}.control.instruct` in its accepts).
import type { Command } from 'commander';
import { paintFor, type Paint } from '../audit/paint.js';
import { rowsFrom, type SessionRow } from '../consumer/roster.js';
import { withConsumer } from '../consumer/connect.js';
import { addRelayOptions, type RelayFlags } from './relay-options.js';

export const SESSIONS_EXIT = { ok: 0, unreachable: 7 } as const;

export function renderRows(rows: SessionRow[], p: Paint): string {
  if (rows.length === 0) return p.dim('no live sessions on the relay');
  const head = ['SESSION', 'AGENT', 'STEERING', 'ACCEPTS'];
  const body = rows.map((r) => [
    r.session + (r.claimants > 1 ? ` (${r.claimants} claimants)` : ''),
    `${r.agent ?? '?'}${r.instance ? `@${r.instance}` : ''}`,
    r.instruct ? 'instruct' : 'off',
    r.accepts.join(', ') || '-',
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ');
  return [p.bold(line(head)), ...body.map((b, i) => {
    const text = line(b);
    return rows[i]!.instruct ? text.replace(' instruct ', ` ${p.green('instruct')} `) : text;
  })].join('\n');
}

export async function runSessions(f: RelayFlags & { json?: boolean }, io: { out: NodeJS.WritableStream & { isTTY?: boolean } }): Promise<number> {
  const rows = await withConsumer<SessionRow[] | { error: string }>(f, async (consumer) => rowsFrom(await consumer.roster()), (error) => ({ error }));
  if (!Array.isArray(rows)) {
    io.out.write(f.json ? `${JSON.stringify(rows)}\n` : `✗ ${rows.error}\n`);
    return SESSIONS_EXIT.unreachable;
  }
  io.out.write(f.json ? `${JSON.stringify(rows, null, 2)}\n` : `${renderRows(rows, paintFor(io.out))}\n`);
  return SESSIONS_EXIT.ok;
}

export function registerSessions(program: Command): void {
  const cmd = program
    .command('sessions')
    .description('list live sessions on the relay and what each claimant declares')
    .option('--json', 'print the roster rows as JSON');
  addRelayOptions(cmd)
    .addHelpText('after', '\nExit codes: 0 listed, 7 relay unreachable.')
    .action(async (f: RelayFlags & { json?: boolean }) => {
      process.exitCode = await runSessions(f, { out: process.stdout });
    });
}
