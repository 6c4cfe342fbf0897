// D44 in the audit: the session's queue replayed from the stream (each accepted instruct joins
// it; edits, moves, promotions and the pause change it; deliveries and drops leave it), and the
// three breaches that replay finds: a delivery while the queue was paused, a delivery ahead of an
// instruction the sender had moved before it, and a delivery of a text an edit had replaced.
// The same replay gives the live boards the queue's order, versions and pause.
import { order, str, type QueueChange, type SessionRecord, type TerminalRecord } from './fold-record.js';
import type { Finding, QueueChangedBy, Sighting } from './views.js';
import type { DecidedBy } from '../machines/decided-by.js';

const INSTRUCT_ONLY = /^x\.[a-z0-9_-]+\.control\.instruct$/;

/** What the replay ends with: the waiting ids in order, each one's version and delivery, the pause. */
export interface QueueReplay {
  order: string[];
  versions: Map<string, number>;
  /** The text of each instruction's newest edit, where the stream carries it (capture redacted or above). */
  texts: Map<string, string>;
  delivery: Map<string, string>;
  paused: boolean;
  /** D46: who paused it, while it stays paused. */
  pausedBy?: DecidedBy;
  /** D46: the last edit, move or promote of each instruction, and who made it. */
  changedBy: Map<string, QueueChangedBy>;
  findings: Finding[];
}

type Step =
  | { at: Sighting; kind: 'accepted'; id: string }
  | { at: Sighting; kind: 'change'; change: QueueChange }
  | { at: Sighting; kind: 'terminal'; t: TerminalRecord; id: string };

const placed = (list: string[], id: string, position: number): string[] => {
  const rest = list.filter((x) => x !== id);
  rest.splice(Math.max(0, Math.min(rest.length, position - 1)), 0, id);
  return rest;
};

function stepsOf(s: SessionRecord): Step[] {
  const steps: Step[] = [];
  for (const [id, { event }] of s.commands) {
    if (!INSTRUCT_ONLY.test(event.type)) continue;
    const ack = s.acks.get(id)?.find((a) => a.accepted);
    if (ack !== undefined) steps.push({ at: ack.sighting, kind: 'accepted', id });
  }
  for (const change of s.changes) steps.push({ at: change.sighting, kind: 'change', change });
  for (const t of s.terminals)
    if (t.cause !== undefined) steps.push({ at: t.sighting, kind: 'terminal', t, id: t.cause });
  return steps.sort((a, b) => order(a.at, b.at));
}

/** D44: replays the session's queue and finds deliveries that broke the sender's pause, order or edit. */
export function replayQueue(s: SessionRecord): QueueReplay {
  const r: QueueReplay = {
    order: [],
    versions: new Map(),
    texts: new Map(),
    delivery: new Map(),
    paused: false,
    changedBy: new Map(),
    findings: [],
  };
  let moved = false;
  const breach = (rule: Finding['rule'], message: string, t: TerminalRecord): void => {
    r.findings.push({ rule, message, place: t.sighting.place, eventId: t.sighting.id });
  };
  for (const step of stepsOf(s)) {
    if (step.kind === 'accepted') {
      const d = str(s.commands.get(step.id)?.event.data?.['delivery']);
      r.delivery.set(step.id, d ?? 'moment');
      if (!r.order.includes(step.id)) r.order.push(step.id);
      continue;
    }
    if (step.kind === 'change') {
      const { kind, subject, data } = step.change;
      if (kind === 'held') {
        r.paused = data['paused'] === true;
        r.pausedBy = r.paused ? step.change.decidedBy : undefined;
        continue;
      }
      if (subject === undefined) continue;
      const by = step.change.decidedBy;
      if (by !== undefined) r.changedBy.set(subject, { change: kind, by });
      if (kind === 'edited' && typeof data['version'] === 'number') {
        r.versions.set(subject, data['version']);
        const text = str(s.commands.get(step.change.cause ?? '')?.event.data?.['text']);
        if (text !== undefined) r.texts.set(subject, text);
      } else if (kind === 'moved' && typeof data['position'] === 'number') {
        r.order = placed(r.order, subject, data['position']);
        moved = true;
      } else if (kind === 'promoted') {
        r.delivery.set(subject, 'steer');
        r.order = placed(r.order, subject, 1);
      }
      continue;
    }
    const { t, id } = step;
    const at = r.order.indexOf(id);
    const earlier = r.order.slice(0, Math.max(0, at));
    r.order = r.order.filter((x) => x !== id);
    // A delivery through a native lane was handed to the vendor before (D44): only the hook lane's queue is judged.
    if (t.kind !== 'delivered' || at < 0 || t.lane !== undefined) continue;
    const kind = r.delivery.get(id) ?? 'moment';
    if (r.paused && kind !== 'steer')
      breach('delivered-while-paused', `instruction ${id} was delivered while its queue was paused (D44)`, t);
    const newest = r.versions.get(id) ?? 1;
    if ((t.version ?? 1) < newest)
      breach(
        'delivered-superseded',
        `instruction ${id} was delivered at text version ${t.version ?? 1} after version ${newest} replaced it (D44)`,
        t,
      );
    // Within one delivery kind the queue leaves in its order (D8, D31): one of the kind still ahead was skipped.
    const before = earlier.find((x) => r.delivery.get(x) === kind);
    if (moved && before !== undefined)
      breach(
        'delivered-out-of-order',
        `instruction ${id} was delivered while ${before}, ahead of it in the queue's order after a move, still waited (D44)`,
        t,
      );
  }
  return r;
}
