// `aep-steer pending`: the permission and form requests live sessions hold open, with the ids
// `respond` needs, what each asks (D35: the command at a redacted ceiling, the tool name below)
// and how long it has waited.
import type { Command } from 'commander';
import type { Paint } from '../audit/paint.js';
import { pendingRequests, type PendingRequest } from '../consumer/pending.js';
import { relayAction, runListing, type Listing, type RelayFlags } from './relay-options.js';
import { secondApproverNote } from '../consumer/explain-second.js';

export const PENDING_EXIT = { listed: 0, usage: 2, unreachable: 7, unauthorized: 8 } as const;

/** `42s`, `3m 5s`, `2h 1m`. */
export function age(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
}

/** What a request asks, in one line: its prompt, a form's questions, the answers it takes. */
export function askedLine(r: PendingRequest): string {
  const parts = [r.prompt ?? `${r.vendor} requests ${r.kind}${r.subject ? `: ${r.subject}` : ''}`];
  for (const f of r.fields ?? []) {
    const field = (f ?? {}) as { id?: unknown; label?: unknown; choices?: unknown };
    const choices = Array.isArray(field.choices)
      ? field.choices.map((c) => {
          const x = (c ?? {}) as { label?: unknown; id?: unknown };
          return String(x.label ?? x.id);
        })
      : [];
    parts.push(
      `[${String(field.id)}] ${String(field.label ?? field.id)}${choices.length ? ` (${choices.join(' / ')})` : ''}`,
    );
  }
  if (r.options) parts.push(`options: ${r.options.join(', ')}`);
  // D48: a risky request says why, and whether it waits for a second approver.
  const second = secondApproverNote(r.risky, r.firstBy);
  if (second !== '') parts.push(second);
  return parts.join('; ');
}

export function describePending(rows: readonly PendingRequest[], p: Paint, session?: string): string {
  if (rows.length === 0) return `no pending requests${session ? ` in session ${session}` : ''}`;
  return rows
    .map((r) => `${p.bold(r.request)}  ${r.session}  ${p.blue(r.kind)}  ${p.dim(age(r.ageMs))}  ${askedLine(r)}`)
    .join('\n');
}

interface PendingFlags extends RelayFlags {
  session?: string;
  json?: boolean;
}

type Listed = Listing<{ requests: PendingRequest[]; session?: string }>;

export function runPending(f: PendingFlags, io: { out: NodeJS.WritableStream & { isTTY?: boolean } }): Promise<number> {
  const describe = (o: Listed, p: Paint): string =>
    o.outcome === 'listed' ? describePending(o.requests, p, o.session) : `${p.red('✗')} ${o.detail}`;
  return runListing(f, io.out, PENDING_EXIT, describe, async (consumer) => ({
    requests: await pendingRequests(consumer, f.session === undefined ? {} : { session: f.session }),
    ...(f.session === undefined ? {} : { session: f.session }),
  }));
}

export function registerPending(program: Command): void {
  const cmd = program
    .command('pending')
    .description('list held permission and form requests: id, session, kind, what is asked, age')
    .option('--session <id>', "only this session's requests")
    .option('--json', 'print one JSON object: {outcome, requests: [...]}');
  relayAction(
    cmd,
    '\nExit codes: 0 listed (none pending included), 2 usage, 7 relay unreachable, 8 token refused.',
    (f: PendingFlags) => runPending(f, { out: process.stdout }),
  );
}
