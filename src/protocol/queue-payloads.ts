// D44 payloads, vendor-scoped as `x.{vendor}.<name>`: the sender's verbs on what waits (edit in
// place, move, promote to a steer now, pause the queue) and the events that settle each.
import { bool, int, obj, oneOf, str } from './shape.js';

export const QUEUE_PAYLOADS = {
  'control.edit': obj({ instruction: str(), text: str().at('redacted') }),
  'control.move': obj({ instruction: str() }, { before: str(), to: oneOf(['front', 'back']) }),
  'control.promote': obj({ instruction: str() }, { idle: oneOf(['refuse', 'wait', 'start']) }),
  'control.hold': obj({ paused: bool() }),
  /** What each verb settled: the new text version, the new place (1 is the front), the pause. */
  'instruction.edited': obj({ version: int({ min: 2 }) }),
  'instruction.moved': obj({ position: int({ min: 1 }) }),
  'instruction.promoted': obj({}, { lane: str() }),
  'queue.held': obj({ paused: bool() }),
};
