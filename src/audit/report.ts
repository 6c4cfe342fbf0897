// Renders an audit result: one line per instruction's lifecycle, then each violation with where
// it happened (file:line, event id), then a summary. The JSON form carries the same facts.
import type { AuditResult, Violation } from './audit.js';
import type { InstructionRecord } from './views.js';
import { plain, type Paint } from './paint.js';
import { describeDecidedBy } from '../machines/decided-by.js';
import type { RequestDecision } from './decisions.js';

export function outcomeText(r: InstructionRecord): string {
  switch (r.status) {
    case 'delivered': {
      const after = r.delivered?.queuedMs === undefined ? '' : ` after ${r.delivered.queuedMs} ms`;
      return `delivered${after}${wayIn(r)}`;
    }
    case 'dropped': {
      const by = r.dropped?.decidedBy;
      return `dropped (${r.dropped?.reason ?? 'no reason given'}${by === undefined ? '' : ` by ${describeDecidedBy(by)}`})`;
    }
    case 'rejected':
      return `rejected ${r.rejected?.reason ?? ''}${r.rejected?.detail ? `: ${r.rejected.detail}` : ''}`.trimEnd();
    case 'pending':
      return 'still pending';
    case 'unacknowledged':
      return 'no ack on the stream';
  }
}

/** Which lane took it in (D30): a native lane and the vendor's id for it, or the hook moment that carried it. */
function wayIn(r: InstructionRecord): string {
  const d = r.delivered;
  if (d?.lane !== undefined) return ` through the ${d.lane} lane${d.ref === undefined ? '' : ` (ref ${d.ref})`}`;
  return d?.moment === undefined ? '' : ` at ${d.moment} (hook lane)`;
}

function colourFor(r: InstructionRecord, p: Paint): (s: string) => string {
  switch (r.status) {
    case 'delivered':
      return p.green;
    case 'dropped':
    case 'rejected':
      return p.red;
    default:
      return p.yellow;
  }
}

function instructionLine(r: InstructionRecord, p: Paint = plain): string {
  const sender = r.sender ?? 'unknown sender';
  const steps: string[] = [];
  if (r.accepted) steps.push('accepted');
  // D46: each change the sender made while it waited, and who made it.
  for (const c of r.changes ?? [])
    steps.push(c.decidedBy === undefined ? c.kind : `${c.kind} by ${describeDecidedBy(c.decidedBy)}`);
  steps.push(colourFor(r, p)(outcomeText(r)));
  return `${p.bold(r.id)}  session ${r.session}${r.vendor ? ` (${r.vendor})` : ''}  from ${sender}  ${steps.join(' → ')}`;
}

/** D46: a request's end and who decided it; D48: who gave the first allow of a risky one. */
function requestLine(d: RequestDecision, p: Paint = plain): string {
  const by = d.decidedBy === undefined ? 'decided by an unnamed party' : `by ${describeDecidedBy(d.decidedBy)}`;
  const first = d.firstBy === undefined ? '' : `, first allow by ${describeDecidedBy(d.firstBy)}`;
  const risky = d.risky === undefined ? '' : p.yellow(` risky (${d.risky})`);
  return `${p.bold(d.request)}  session ${d.session}  request${risky}  ${d.outcome} ${by}${first}`;
}

function violationLine(v: Violation, p: Paint = plain): string {
  const where = v.file !== undefined ? `${v.file}${v.line !== undefined ? `:${v.line}` : ''}` : '(stream)';
  return `${p.red('✗')} ${where}${v.eventId ? `  event ${v.eventId}` : ''}  ${p.bold(v.rule)}: ${v.message}`;
}

function summary(r: AuditResult): Record<'delivered' | 'dropped' | 'pending' | 'rejected' | 'unacknowledged', number> {
  const counts = { delivered: 0, dropped: 0, pending: 0, rejected: 0, unacknowledged: 0 };
  for (const i of r.instructions) counts[i.status] += 1;
  return counts;
}

export function renderText(r: AuditResult, p: Paint = plain): string {
  const lines: string[] = [];
  if (r.instructions.length === 0) lines.push(p.dim('no instructions in these logs'));
  for (const i of r.instructions) lines.push(instructionLine(i, p));
  for (const d of r.requests ?? []) lines.push(requestLine(d, p));
  for (const s of r.sessions)
    if (s.pausedBy !== undefined) lines.push(`session ${s.session}  queue paused by ${describeDecidedBy(s.pausedBy)}`);
  const tornOrSkipped = r.notes.filter((n) => n.kind === 'torn-tail');
  for (const n of tornOrSkipped) lines.push(p.dim(`note: ${n.file}:${n.line}  ${n.message}`));
  if (r.violations.length > 0) {
    lines.push('');
    for (const v of r.violations) lines.push(violationLine(v, p));
  }
  const c = summary(r);
  lines.push('');
  lines.push(
    `${r.events} events in ${r.files.length} file${r.files.length === 1 ? '' : 's'}; ${r.instructions.length} instruction${r.instructions.length === 1 ? '' : 's'}: ` +
      `${c.delivered} delivered, ${c.dropped} dropped, ${c.pending} pending, ${c.rejected} rejected` +
      (c.unacknowledged > 0 ? `, ${c.unacknowledged} without ack` : '') +
      `; ` +
      (r.violations.length === 0
        ? p.green('no violations')
        : p.red(`${r.violations.length} violation${r.violations.length === 1 ? '' : 's'}`)),
  );
  return lines.join('\n');
}

export function renderJson(r: AuditResult): string {
  return JSON.stringify({ ok: r.violations.length === 0, summary: summary(r), ...r }, null, 2);
}
