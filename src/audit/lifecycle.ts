// Folds an AEP stream into each session's steering state and each instruction's lifecycle.
// The audit (audit.ts) and the live inspect page (inspect/board.ts) both read the stream through
// this one fold, so what the page shows live is what the audit later reports.
// The fold is order-tolerant across files: verdicts that need the whole picture (which acks
// belong to instructions, which terminals are orphans) are taken in `findings()`, not on arrival.
import { captureRank, dedupeKey, type AepEvent } from '../protocol/envelope.js';
import { CODE_ATTR, isAgentActivity, isCommandType, RESUME_WINDOW_ATTR } from '../protocol/types.js';

export type SessionState = 'idle' | 'queued' | 'holding.permission' | 'holding.elicitation' | 'ended';

export type InstructionStatus = 'unacknowledged' | 'pending' | 'delivered' | 'dropped' | 'rejected';

/** Where an event came from; the audit sets file and line, the live page leaves them out. */
export interface EventPlace {
  file?: string;
  line?: number;
}

export interface Sighting {
  id: string;
  time: string;
  place: EventPlace;
  epoch?: number;
  seq?: number;
}

export interface InstructionRecord {
  /** The command id: every later step of this instruction names it in `cause` (D4, D9, D10). */
  id: string;
  session: string;
  /** Vendor token from `x.{vendor}.control.instruct`, or from the terminal's type. */
  vendor?: string;
  /** The sender: the command's `agent` (AEP-0004 §2). */
  sender?: string;
  sentAt?: string;
  command?: Sighting;
  /** Text as carried on the stream (present only at capture redacted or above). */
  text?: string;
  /** D31: the delivery the sender chose, when it named one. */
  delivery?: string;
  accepted?: Sighting;
  rejected?: Sighting & { reason?: string; code?: string; detail?: string };
  /**
   * `moment`: the vendor moment whose reply carried it (D27), when the adapter names it; `lane`
   * and `ref`: the native lane that delivered it and the vendor's id for it (D30), absent for the hook lane.
   */
  delivered?: Sighting & { queuedMs?: number; moment?: string; lane?: string; ref?: string };
  /** A send_input's `input.sent`: the vendor took it (D28, D29). */
  sent?: Sighting;
  dropped?: Sighting & { reason?: string };
  status: InstructionStatus;
}

export interface HoldView {
  request: string;
  kind: string;
  prompt?: string;
  /** Option ids a permission offers (`allow`, `deny`), and a form's fields, as requested. */
  options?: string[];
  fields?: unknown[];
  since: string;
}

export interface SessionView {
  session: string;
  agent?: string;
  source?: string;
  state: SessionState;
  /** Pending instructions, FIFO by acceptance (D3). */
  queue: { id: string; sender?: string; acceptedAt: string; text?: string; delivery?: string }[];
  holds: HoldView[];
  epoch?: number;
  seq?: number;
  events: number;
  startedAt?: string;
  endedAt?: string;
  updatedAt: string;
}

/** A steering-rule breach found by the fold; the audit adds where it happened. */
export interface Finding {
  rule: FindingRule;
  message: string;
  place: EventPlace;
  eventId: string;
  /** The instruction a `terminal-missing` finding is about. */
  instruction?: string;
}

export type FindingRule =
  | 'ack-uncaused'
  | 'terminal-uncaused'
  | 'terminal-cause'
  | 'terminal-orphan'
  | 'terminal-duplicate'
  /** D32: an instruction delivered after its withdraw was accepted. */
  | 'delivered-after-withdraw'
  | 'terminal-unaccepted'
  | 'terminal-missing'
  | 'accepted-after-end'
  | 'capture-text';

// A send_input (D28, D29) is followed like an instruct: `input.sent` is its delivery, or only a
// step towards it where the vendor also reports `input.consumed` (or the session drops it unread).
const INSTRUCT = /^x\.([a-z0-9_-]+)\.control\.(?:instruct|send_input)$/;
const DELIVERED = /^x\.([a-z0-9_-]+)\.(?:instruction\.delivered|input\.consumed)$/;
const SENT = /^x\.([a-z0-9_-]+)\.input\.sent$/;
const DROPPED = /^x\.([a-z0-9_-]+)\.instruction\.dropped$/;
/** A start moment reopened an ended session; a reopened session's later end (D6, D10). */
const REOPENED = /^x\.[a-z0-9_-]+\.session\.reopened$/;
const CLOSED = /^x\.[a-z0-9_-]+\.session\.closed$/;
const ACKS = new Set(['control.accepted', 'control.rejected']);
const REDACTED = captureRank('redacted');

interface AckRecord {
  sighting: Sighting;
  accepted: boolean;
  reason?: string;
  detail?: string;
  /** The stable machine code beside `reason` (README "Errors"). */
  code?: string;
}

interface TerminalRecord {
  sighting: Sighting;
  kind: 'delivered' | 'dropped' | 'sent';
  vendor: string;
  cause?: string;
  queuedMs?: number;
  moment?: string;
  lane?: string;
  ref?: string;
  reason?: string;
}

interface Mark {
  kind: 'end' | 'reopen';
  sighting: Sighting;
  /** The end event's `resumewindowms` attribute: instructions may be accepted until end + window (D25). */
  windowMs?: number;
}

interface SessionRecord {
  session: string;
  agent?: string;
  source?: string;
  epoch?: number;
  seq?: number;
  events: number;
  startedAt?: string;
  ended?: Sighting;
  /** Every end (session.ended, x.*.session.closed) and reopening, as seen; an end states its D25 window (D36). */
  marks: Mark[];
  updatedAt: string;
  holds: Map<string, HoldView>;
  /** Every command seen for this session, by id. */
  commands: Map<string, { event: AepEvent; sighting: Sighting }>;
  /** Acks by command id (cause), in arrival order; more than one is a finding. */
  acks: Map<string, AckRecord[]>;
  ackIds: Map<string, string>;
  terminals: TerminalRecord[];
}

const sightingOf = (e: AepEvent, place: EventPlace): Sighting => {
  const s: Sighting = { id: e.id, time: e.time, place };
  if (typeof e.epoch === 'number') s.epoch = e.epoch;
  if (typeof e.seq === 'number') s.seq = e.seq;
  return s;
};

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** `(epoch, seq)` order of two sightings from one emitter; undefined when either lacks a seq. */
const after = (a: Sighting, b: Sighting): boolean | undefined => {
  if (a.seq === undefined || b.seq === undefined) return undefined;
  const ea = a.epoch ?? 0;
  const eb = b.epoch ?? 0;
  return ea !== eb ? ea > eb : a.seq > b.seq;
};

export class SteeringFold {
  private readonly sessionsByKey = new Map<string, SessionRecord>();
  private readonly seen = new Set<string>();
  private readonly immediate: Finding[] = [];

  /** Applies one event. A redelivery of an event already applied (same source and id) is ignored (AEP-0001 §5.3). */
  apply(e: AepEvent, place: EventPlace = {}): boolean {
    const key = dedupeKey(e);
    if (this.seen.has(key)) return false;
    this.seen.add(key);
    if (typeof e.session !== 'string') return true;
    const s = this.session(e.session, e.time);
    s.events += 1;
    // D37: last activity is the agent's; a command or the adapter's answer to one is not.
    if (isAgentActivity(e.type)) s.updatedAt = e.time;
    const sight = sightingOf(e, place);
    const command = isCommandType(e.type);
    if (!command) {
      s.agent ??= e.agent;
      s.source ??= e.source;
      if (typeof e.seq === 'number') {
        s.epoch = e.epoch ?? 0;
        s.seq = e.seq;
      }
    }
    this.checkCapture(e, place);
    if (command) {
      s.commands.set(e.id, { event: e, sighting: sight });
      return true;
    }
    if (ACKS.has(e.type)) {
      if (typeof e.cause !== 'string') {
        this.immediate.push({
          rule: 'ack-uncaused',
          message: `${e.type} has no cause, so it acknowledges no command (AEP-0004 §3)`,
          place,
          eventId: e.id,
        });
        return true;
      }
      const data = e.data ?? {};
      const ack: AckRecord = { sighting: sight, accepted: e.type === 'control.accepted' };
      const reason = str(data['reason']);
      const detail = str(data['detail']);
      if (reason !== undefined) ack.reason = reason;
      if (detail !== undefined) ack.detail = detail;
      const code = str(e[CODE_ATTR]);
      if (code !== undefined) ack.code = code;
      const list = s.acks.get(e.cause) ?? [];
      list.push(ack);
      s.acks.set(e.cause, list);
      s.ackIds.set(e.id, e.cause);
      return true;
    }
    const delivered = DELIVERED.exec(e.type);
    const dropped = DROPPED.exec(e.type);
    const sent = SENT.exec(e.type);
    if (delivered || dropped || sent) {
      const data = e.data ?? {};
      const t: TerminalRecord = {
        sighting: sight,
        kind: delivered ? 'delivered' : dropped ? 'dropped' : 'sent',
        vendor: (delivered ?? dropped ?? sent)![1]!,
      };
      if (typeof e.cause === 'string') t.cause = e.cause;
      if (typeof data['queued_ms'] === 'number') t.queuedMs = data['queued_ms'];
      if (typeof data['moment'] === 'string') t.moment = data['moment'];
      if (typeof data['lane'] === 'string') t.lane = data['lane'];
      if (typeof data['ref'] === 'string') t.ref = data['ref'];
      const reason = str(data['reason']);
      if (reason !== undefined) t.reason = reason;
      // D32: a withdrawal's drop is caused by the withdraw and names the instruction as its subject.
      if (dropped && reason === 'withdrawn' && typeof e.subject === 'string') t.cause = e.subject;
      s.terminals.push(t);
      return true;
    }
    if (REOPENED.test(e.type) || CLOSED.test(e.type)) {
      s.marks.push(REOPENED.test(e.type) ? { kind: 'reopen', sighting: sight } : endMark(e, sight));
      return true;
    }
    switch (e.type) {
      case 'session.started':
        s.startedAt ??= e.time;
        break;
      case 'session.ended':
        s.ended ??= sight;
        s.marks.push(endMark(e, sight));
        break;
      case 'attention.requested': {
        const data = e.data ?? {};
        const hold: HoldView = { request: e.id, kind: str(data['kind']) ?? 'other', since: e.time };
        const prompt = str(data['prompt']);
        if (prompt !== undefined) hold.prompt = prompt;
        const options = Array.isArray(data['options'])
          ? data['options']
              .map((o) => str((o as { id?: unknown } | null)?.id))
              .filter((o): o is string => o !== undefined)
          : [];
        if (options.length > 0) hold.options = options;
        if (Array.isArray(data['fields'])) hold.fields = data['fields'];
        s.holds.set(e.id, hold);
        break;
      }
      case 'attention.resolved':
      case 'attention.timeout':
        if (typeof e.subject === 'string') s.holds.delete(e.subject);
        break;
      default:
        break;
    }
    return true;
  }

  /** Instruction text belongs to the redacted class: never on the stream below it (design record; aep-wire §2.2). */
  private checkCapture(e: AepEvent, place: EventPlace): void {
    const steering = INSTRUCT.test(e.type) || DELIVERED.test(e.type) || DROPPED.test(e.type) || SENT.test(e.type);
    if (!steering || e.data === undefined || !('text' in e.data)) return;
    if (captureRank(e.capture) >= REDACTED) return;
    this.immediate.push({
      rule: 'capture-text',
      message: `${e.type} carries instruction text at capture ${e.capture ?? 'metadata (default)'}; it needs redacted or above`,
      place,
      eventId: e.id,
    });
  }

  private session(id: string, time: string): SessionRecord {
    let s = this.sessionsByKey.get(id);
    if (!s) {
      s = {
        session: id,
        events: 0,
        updatedAt: time,
        holds: new Map(),
        commands: new Map(),
        acks: new Map(),
        ackIds: new Map(),
        terminals: [],
        marks: [],
      };
      this.sessionsByKey.set(id, s);
    }
    return s;
  }

  /** Each instruction's lifecycle, in order of first sighting per session. */
  instructions(): InstructionRecord[] {
    return [...this.sessionsByKey.values()].flatMap((s) => this.resolve(s).records);
  }

  /** Every session's current state, as the session machine would hold it. */
  sessions(): SessionView[] {
    return [...this.sessionsByKey.values()].map((s) => this.view(s));
  }

  sessionView(id: string): SessionView | undefined {
    const s = this.sessionsByKey.get(id);
    return s ? this.view(s) : undefined;
  }

  /** Every breach of the steering rules seen so far (D4, D9, D10, AEP-0004 §3). */
  findings(): Finding[] {
    const out = [...this.immediate];
    for (const s of this.sessionsByKey.values()) out.push(...this.resolve(s).findings);
    return out;
  }

  private view(s: SessionRecord): SessionView {
    const { records } = this.resolve(s);
    const queue = records
      .filter((r) => r.status === 'pending' && r.accepted)
      .sort((a, b) => order(a.accepted!, b.accepted!))
      .map((r) => {
        const q: SessionView['queue'][number] = { id: r.id, acceptedAt: r.accepted!.time };
        if (r.sender !== undefined) q.sender = r.sender;
        if (r.text !== undefined) q.text = r.text;
        if (r.delivery !== undefined) q.delivery = r.delivery;
        return q;
      });
    const holds = [...s.holds.values()];
    const hold = holds.at(-1);
    const state: SessionState =
      lastMark(s)?.kind === 'end'
        ? 'ended'
        : hold
          ? hold.kind === 'form'
            ? 'holding.elicitation'
            : 'holding.permission'
          : queue.length > 0
            ? 'queued'
            : 'idle';
    const v: SessionView = { session: s.session, state, queue, holds, events: s.events, updatedAt: s.updatedAt };
    if (s.agent !== undefined) v.agent = s.agent;
    if (s.source !== undefined) v.source = s.source;
    if (s.epoch !== undefined) v.epoch = s.epoch;
    if (s.seq !== undefined) v.seq = s.seq;
    if (s.startedAt !== undefined) v.startedAt = s.startedAt;
    if (s.ended !== undefined) v.endedAt = s.ended.time;
    return v;
  }

  private resolve(s: SessionRecord): { records: InstructionRecord[]; findings: Finding[] } {
    const findings: Finding[] = [];
    const records = new Map<string, InstructionRecord>();
    const record = (id: string): InstructionRecord => {
      let r = records.get(id);
      if (!r) {
        r = { id, session: s.session, status: 'unacknowledged' };
        records.set(id, r);
      }
      return r;
    };

    for (const [id, { event, sighting }] of s.commands) {
      const m = INSTRUCT.exec(event.type);
      if (!m) continue;
      const r = record(id);
      r.vendor = m[1]!;
      r.sender = event.agent;
      r.sentAt = event.time;
      r.command = sighting;
      const text = event.data?.['text'];
      if (typeof text === 'string') r.text = text;
      const delivery = event.data?.['delivery'];
      if (typeof delivery === 'string') r.delivery = delivery;
    }

    // Terminals first decide which acks belong to instructions when the command itself is not in the log.
    const terminalsByCommand = new Map<string, TerminalRecord[]>();
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
      const list = terminalsByCommand.get(commandId) ?? [];
      list.push(t);
      terminalsByCommand.set(commandId, list);
      const r = record(commandId);
      r.vendor ??= t.vendor;
    }

    for (const [cause, acks] of s.acks) {
      const cmd = s.commands.get(cause);
      const isInstruct = cmd ? INSTRUCT.test(cmd.event.type) : terminalsByCommand.has(cause) || records.has(cause);
      // A second decision for one command is the stream checker's ack-decision rule (AEP-0004 §3);
      // the lifecycle follows the first.
      if (!isInstruct) continue;
      const r = record(cause);
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

    for (const [id, all] of terminalsByCommand) {
      const r = record(id);
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
      } else {
        r.dropped = { ...first.sighting };
        if (first.reason !== undefined) r.dropped.reason = first.reason;
      }
    }

    findings.push(...deliveredAfterWithdraw(s, terminalsByCommand));

    for (const r of records.values()) {
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
    return { records: [...records.values()], findings };
  }
}

const endMark = (e: AepEvent, sighting: Sighting): Mark => {
  const w = e[RESUME_WINDOW_ATTR];
  return typeof w === 'number' && w > 0 ? { kind: 'end', sighting, windowMs: w } : { kind: 'end', sighting };
};

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

/** The latest end or reopening (before `before`, when given), in stream order. */
function lastMark(s: SessionRecord, before?: Sighting): Mark | undefined {
  let last: Mark | undefined;
  for (const m of s.marks) {
    if (before !== undefined && after(m.sighting, before) !== false) continue;
    if (last === undefined || order(m.sighting, last.sighting) > 0) last = m;
  }
  return last;
}

function order(a: Sighting, b: Sighting): number {
  if (a.seq !== undefined && b.seq !== undefined) {
    const ea = a.epoch ?? 0;
    const eb = b.epoch ?? 0;
    return ea !== eb ? ea - eb : a.seq - b.seq;
  }
  return a.time < b.time ? -1 : a.time > b.time ? 1 : 0;
}
