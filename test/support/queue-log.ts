// A session's queue as an adapter's log would hold it, for the audit's queue tests: three queued
// instructions accepted, then the sender's verbs each acked and settled, deliveries, and a cancel
// that clears what waits.
import { SessionEmitter, command, type AepEvent } from '../../src/protocol/index.js';
import {
  deliveredType as delivered,
  droppedType as dropped,
  instructType as instruct,
  queueChangeType,
  queueVerbType,
} from '../../src/protocol/types.js';

const QUEUE_VENDOR = 'claude-code';
const V = QUEUE_VENDOR;

/** A session with three queued instructions accepted, and helpers to change, deliver and clear them. */
export function queueOfThree(session: string) {
  const em = new SessionEmitter({ agent: V, session, host: 'h' });
  const sender = { agent: 'alice', host: 'h' };
  let at = Date.parse('2026-12-01T10:00:00.000Z');
  const events: AepEvent[] = [em.emit({ type: 'session.started', at: at++ })];
  const ids: string[] = [];
  for (const text of ['one', 'two', 'three']) {
    const c = command(sender, session, {
      type: instruct(V),
      data: { text, delivery: 'queue' },
      capture: 'redacted',
      at: at++,
    });
    events.push(c, em.emit({ type: 'control.accepted', cause: c.id, at: at++ }));
    ids.push(c.id);
  }
  const verb = (
    v: 'edit' | 'move' | 'hold',
    data: Record<string, unknown>,
    change: 'edited' | 'moved' | 'held',
    settled: Record<string, unknown>,
  ) => {
    const c = command(sender, session, { type: queueVerbType(V, v), data, capture: 'redacted', at: at++ });
    const subject = typeof data['instruction'] === 'string' ? { subject: data['instruction'] } : {};
    events.push(
      c,
      em.emit({ type: 'control.accepted', cause: c.id, at: at++ }),
      em.emit({ type: queueChangeType(V, change), cause: c.id, ...subject, data: settled, at: at++ }),
    );
  };
  const deliver = (id: string, data: Record<string, unknown> = {}) =>
    events.push(em.emit({ type: delivered(V), cause: id, data: { moment: 'UserPromptSubmit', ...data }, at: at++ }));
  /** D44: `agent`'s cancel {clear: true} acked, then each of `cleared` dropped `withdrawn` with `decided_by`. */
  const clear = (agent: string, cleared: readonly string[], decidedBy: Record<string, string>) => {
    const c = command({ agent, host: 'h' }, session, {
      type: 'control.cancel',
      data: { scope: 'run', clear: true, surface: decidedBy['surface'] },
      at: at++,
    });
    events.push(c, em.emit({ type: 'control.accepted', cause: c.id, at: at++ }));
    for (const id of cleared)
      events.push(
        em.emit({
          type: dropped(V),
          cause: c.id,
          subject: id,
          data: { reason: 'withdrawn', decided_by: decidedBy },
          at: at++,
        }),
      );
  };
  return { ids: ids as [string, string, string], events, verb, deliver, clear };
}
