// The JSON text of an event, made once. A built event is never changed, and the log, the ack
// record and the outbox each need its text: the first to ask pays for JSON.stringify, the rest
// reuse it. Keyed weakly, so a text lives exactly as long as its event.
import type { AepEvent } from './envelope.js';

const texts = new WeakMap<AepEvent, string>();

export function eventText(e: AepEvent): string {
  let t = texts.get(e);
  if (t === undefined) {
    t = JSON.stringify(e);
    texts.set(e, t);
  }
  return t;
}
