// The protocol core as the rest of the adapter uses it: each name from the module that defines
// it. What is not named here is imported from its own module.
export { dedupeKey, type AepCommand, type AepEvent } from './envelope.js';
export { SteeringError, type Rejection } from './errors.js';
export {
  CODE_ATTR,
  RESUME_WINDOW_ATTR,
  closedType,
  deliveredType,
  describedType,
  droppedType,
  inputConsumedType,
  inputSentType,
  instructType,
  reopenedType,
  scopeOf,
  withdrawType,
} from './types.js';
export { SessionEmitter, agentEvent, command, newId, type EventFields } from './build.js';
export { DELIVERIES, IDLE } from './payloads.js';
export { checkStream } from './stream-checks.js';
export { eventText } from './text.js';
