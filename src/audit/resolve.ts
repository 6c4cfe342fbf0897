// One session's instructions and findings, resolved from what the fold kept of it. The phases run
// in a fixed order (commands, terminals, acks, outcomes, withdraws, ends), and each adds records
// and findings in that order, so the result never depends on the order events arrived in.
import { replayQueue } from './queue-rules.js';
import type { Finding, InstructionRecord, Sighting } from './views.js';
import {
  INSTRUCT,
  lastMark,
  order,
  str,
  type AckRecord,
  type Mark,
  type SessionRecord,
  type TerminalRecord,
} from './fold-record.js';

/** The instruction records of one session, made on first mention, in that order. */
class Records {
  readonly byId = new Map<string, InstructionRecord>();
  constructor(private readonly session: string) {}
  get(id: string): InstructionRecord {
    let r = this.byId.get(id);
    if (!r) {
      r = { id, session: this.session, status: 'unacknowledged' };
      this.byId.set(id, r);
    }
    return r;
  }
}

export function resolveSession(s: SessionRecord): { records: InstructionRecord[]; findings: Finding[] } {
  const findings: Finding[] = [];
  const records = new Records(s.session);
  fromCommands(s, records);
  fromChanges(s, records);
  // Terminals first decide which acks belong to instructions when the command itself is not in the log.
  const terminals = terminalsByCommand(s, records, findings);
  fromAcks(s, records, terminals);
  fromTerminals(records, terminals, findings);
  findings.push(...deliveredAfterWithdraw(s, terminals));
  findings.push(...startsBesideTurns(s, terminals));
  findings.push(...replayQueue(s).findings);
  settleStatus(s, records, findings);
  return { records: [...records.byId.values()], findings };
}

/** D44, D46: the queue verbs that changed an instruction seen, and who made each change. */
function fromChanges(s: SessionRecord, records: Records): void {
  const changes = s.changes.filter((c) => c.kind !== 'held' && c.subject !== undefined && records.byId.has(c.subject));
  for (const c of changes.sort((a, b) => order(a.sighting, b.sighting))) {
    const r = records.get(c.subject!);
    const kind = c.kind as 'edited' | 'moved' | 'promoted';
    const by = c.decidedBy === undefined ? {} : { decidedBy: c.decidedBy };
    r.changes = [...(r.changes ?? []), { ...c.sighting, kind, ...by }];
  }
}

/** Each instruct (or send_input) command seen: its vendor, sender, time, text and delivery. */
function fromCommands(s: SessionRecord, records: Records): void {
  for (const [id, { event, sighting }] of s.commands) {
    const m = INSTRUCT.exec(event.type);
    if (!m) continue;
    const r = records.get(id);
    r.vendor = m[1]!;
    r.sender = event.agent;
    r.sentAt = event.time;
    r.command = sighting;
    const text = event.data?.['text'];
    if (typeof text === 'string') r.text = text;
    const delivery = event.data?.['delivery'];
    if (typeof delivery === 'string') r.delivery = delivery;
  }
}

/** The terminals by the command they end; one naming no instruct command is a finding instead. */
function terminalsByCommand(s: SessionRecord, records: Records, findings: Finding[]): Map<string, TerminalRecord[]> {
  const byCommand = new Map<string, TerminalRecord[]>();
  for (const t of s.terminals) {
    const here = { place: t.sighting.place, eventId: t.sighting.id };
    if (t.cause === undefined) {
      findings.push({
        rule: 'terminal-uncaused',
        message: `instruction.${t.kind} has no cause; it must name its command (D9, D10)`,
        ...here,
      });
      continue;
    }
    let commandId = t.cause;
    if (!s.commands.has(commandId) && !s.acks.has(commandId)) {
      const viaAck = s.ackIds.get(commandId);
      if (viaAck !== undefined) {
        findings.push({
          rule: 'terminal-cause',
          message: `instruction.${t.kind} names the ack ${commandId}, not the command ${viaAck} (D9, D10)`,
          ...here,
        });
        commandId = viaAck;
      } else {
        findings.push({
          rule: 'terminal-orphan',
          message: `instruction.${t.kind} names ${commandId}, which is neither an instruct command nor its ack in this log`,
          ...here,
        });
        continue;
      }
    } else if (s.commands.has(commandId) && !INSTRUCT.test(s.commands.get(commandId)!.event.type)) {
      findings.push({
        rule: 'terminal-cause',
        message: `instruction.${t.kind} names ${commandId}, a ${s.commands.get(commandId)!.event.type} command, not an instruct`,
        ...here,
      });
      continue;
    }
    const list = byCommand.get(commandId) ?? [];
    list.push(t);
    byCommand.set(commandId, list);
    const r = records.get(commandId);
    r.vendor ??= t.vendor;
  }
  return byCommand;
}

/** Each instruction's first decision: accepted, or rejected with its reason, code and detail. */
function fromAcks(s: SessionRecord, records: Records, terminals: ReadonlyMap<string, TerminalRecord[]>): void {
  for (const [cause, acks] of s.acks) {
    const cmd = s.commands.get(cause);
    const isInstruct = cmd ? INSTRUCT.test(cmd.event.type) : terminals.has(cause) || records.byId.has(cause);
    // A second decision for one command is the stream checker's ack-decision rule (AEP-0004 §3);
    // the lifecycle follows the first.
    if (!isInstruct) continue;
    const r = records.get(cause);
    const first = acks[0]!;
    if (first.accepted) {
      r.accepted = first.sighting;
    } else {
      r.rejected = { ...first.sighting };
      if (first.reason !== undefined) r.rejected.reason = first.reason;
      if (first.code !== undefined) r.rejected.code = first.code;
      if (first.detail !== undefined) r.rejected.detail = first.detail;
    }
  }
}

/** Each instruction's outcome from its first terminal; a second one, or one without an acceptance, is a finding. */
function fromTerminals(records: Records, terminals: ReadonlyMap<string, TerminalRecord[]>, findings: Finding[]): void {
  for (const [id, all] of terminals) {
    const r = records.get(id);
    // `input.sent` and the final outcome are counted apart: one of each at most.
    const sents = all.filter((t) => t.kind === 'sent');
    const finals = all.filter((t) => t.kind !== 'sent');
    const terms = finals.length > 0 ? finals : sents;
    const first = terms[0]!;
    if (sents.length > 0) r.sent = { ...sents[0]!.sighting };
    const extras = [...terms.slice(1), ...(finals.length > 0 ? sents.slice(1) : [])];
    for (const extra of extras) {
      findings.push({
        rule: 'terminal-duplicate',
        message: `instruction ${id} already ended ${first.kind} (${first.sighting.id}); exactly one terminal per instruction (D9, D10)`,
        place: extra.sighting.place,
        eventId: extra.sighting.id,
      });
    }
    if (!r.accepted) {
      findings.push({
        rule: 'terminal-unaccepted',
        message: r.rejected
          ? `instruction ${id} was rejected, yet it ended ${first.kind}`
          : `instruction ${id} ended ${first.kind} with no control.accepted before it (D4)`,
        place: first.sighting.place,
        eventId: first.sighting.id,
      });
    }
    if (first.kind !== 'dropped') {
      r.delivered = { ...first.sighting };
      if (first.queuedMs !== undefined) r.delivered.queuedMs = first.queuedMs;
      if (first.moment !== undefined) r.delivered.moment = first.moment;
      if (first.lane !== undefined) r.delivered.lane = first.lane;
      if (first.ref !== undefined) r.delivered.ref = first.ref;
      if (first.started === true) r.delivered.started = true;
    } else {
      r.dropped = { ...first.sighting };
      if (first.reason !== undefined) r.dropped.reason = first.reason;
      if (first.decidedBy !== undefined) r.dropped.decidedBy = first.decidedBy;
    }
  }
}

/** Each record's status, and the end rules: none accepted after an end (D6), none left pending by one (D10). */
function settleStatus(s: SessionRecord, records: Records, findings: Finding[]): void {
  for (const r of records.byId.values()) {
    r.status = r.delivered
      ? 'delivered'
      : r.dropped
        ? 'dropped'
        : r.rejected
          ? 'rejected'
          : r.accepted
            ? 'pending'
            : 'unacknowledged';
    const last = lastMark(s);
    if (last && r.accepted) {
      // D6 holds from an end until a start moment reopens the session, except inside the
      // resume window the end event states (D25, D36).
      const before = lastMark(s, r.accepted);
      if (before?.kind === 'end' && !inWindow(before, r.accepted)) {
        findings.push({
          rule: 'accepted-after-end',
          message:
            before.windowMs === undefined
              ? `instruction ${r.id} was accepted after session.ended; it must be refused "session ended" (D6)`
              : `instruction ${r.id} was accepted after the end's ${before.windowMs} ms resume window; it must be refused "session ended" (D6, D25)`,
          place: r.accepted.place,
          eventId: r.accepted.id,
        });
      } else if (r.status === 'pending' && last.kind === 'end' && windowClosed(s, last)) {
        findings.push({
          rule: 'terminal-missing',
          message: `session ended with instruction ${r.id} neither delivered nor dropped (D10)`,
          place: last.sighting.place,
          eventId: last.sighting.id,
          instruction: r.id,
        });
      }
    }
  }
}

/** The acceptance came before the end's resume window closed (the adapter's own test: at < end + window). */
const inWindow = (end: Mark, accepted: Sighting): boolean =>
  end.windowMs !== undefined && Date.parse(accepted.time) < Date.parse(end.sighting.time) + end.windowMs;

/**
 * Whether the stream shows an end's resume window closed. With no window it closed at the end.
 * With one, what is queued waits for a resumed run; the adapter drops all of it at once when the
 * window passes and refuses "session ended" after, so either of those after the end is the proof.
 */
function windowClosed(s: SessionRecord, end: Mark): boolean {
  if (end.windowMs === undefined) return true;
  const later = (x: Sighting): boolean => order(x, end.sighting) > 0;
  if (s.terminals.some((t) => t.kind === 'dropped' && t.reason === 'session-ended' && later(t.sighting))) return true;
  return [...s.acks.values()].some((list) => list.some((a) => !a.accepted && isEndedRefusal(a) && later(a.sighting)));
}

const isEndedRefusal = (a: AckRecord): boolean => a.code === 'session-ended' || a.detail === 'session ended';

const WITHDRAW = /^x\.[a-z0-9_-]+\.control\.withdraw$/;

/**
 * D43: an instruction delivered `started: true` began a turn, so the session was idle when it was
 * accepted (no run open on the stream), and no turn but the one it began started before its
 * delivery: a second run started meanwhile would be a turn beside the running one.
 */
function startsBesideTurns(s: SessionRecord, terminals: ReadonlyMap<string, TerminalRecord[]>): Finding[] {
  const out: Finding[] = [];
  for (const [id, list] of terminals) {
    const t = list.find((x) => x.kind === 'delivered' && x.started === true);
    const ack = s.acks.get(id)?.find((a) => a.accepted);
    if (t === undefined || ack === undefined) continue;
    // D44: one queued may be handed over as a start when a turn ends (Copilot's server): judged from
    // the last turn end between its acceptance and its delivery, where there is one.
    const ends = s.runs.filter(
      (r) => r.kind === 'end' && order(r.sighting, ack.sighting) > 0 && order(r.sighting, t.sighting) < 0,
    );
    const from = ends.length > 0 ? ends[ends.length - 1]!.sighting : ack.sighting;
    const before = s.runs.filter((r) => order(r.sighting, from) <= 0);
    const open = before.filter((r) => r.kind === 'start').length > before.filter((r) => r.kind === 'end').length;
    const between = s.runs.filter(
      (r) => r.kind === 'start' && order(r.sighting, from) > 0 && order(r.sighting, t.sighting) < 0,
    );
    if (!open && between.length <= 1) continue;
    out.push({
      rule: 'start-beside-turn',
      message: open
        ? `instruction ${id} was delivered as starting a turn, but a turn was running when it was accepted (D43)`
        : `instruction ${id} was delivered as starting a turn, but ${between.length} turns started between its acceptance and its delivery (D43)`,
      place: t.sighting.place,
      eventId: t.sighting.id,
    });
  }
  return out;
}

/** D32: once a withdraw is accepted the instruction is withdrawn for good; a delivery after that ack is a breach. */
function deliveredAfterWithdraw(s: SessionRecord, terminals: ReadonlyMap<string, TerminalRecord[]>): Finding[] {
  const out: Finding[] = [];
  for (const [id, { event }] of s.commands) {
    const ack = s.acks.get(id)?.[0];
    const instruction = str(event.data?.['instruction']);
    if (!WITHDRAW.test(event.type) || ack?.accepted !== true || instruction === undefined) continue;
    for (const t of terminals.get(instruction) ?? []) {
      if (t.kind !== 'delivered' || order(t.sighting, ack.sighting) <= 0) continue;
      out.push({
        rule: 'delivered-after-withdraw',
        message: `instruction ${instruction} was delivered after its withdraw ${id} was accepted (D32)`,
        place: t.sighting.place,
        eventId: t.sighting.id,
      });
    }
  }
  return out;
}
