// The session machine's guards: questions about the context (and the input) that choose its state.
import type { SessionContext } from './session-context.js';
import type { SessionInput } from './session-input.js';

export const guards = {
  hasHolds: ({ context }: { context: SessionContext }) => context.holds.length > 0,
  hasPending: ({ context }: { context: SessionContext }) => context.queue.length > 0,
  isQueueEmpty: ({ context }: { context: SessionContext }) => context.queue.length === 0,
  isFirstHoldElicitation: ({ context }: { context: SessionContext }) => context.holds[0]?.hold === 'elicitation',
  isFirstHoldPermission: ({ context }: { context: SessionContext }) => context.holds[0]?.hold === 'permission',
  isReleased: ({ context }: { context: SessionContext }) => context.holds.length === 0,
  isReleasedWithPending: ({ context }: { context: SessionContext }) =>
    context.holds.length === 0 && context.queue.length > 0,
  /** The vendor's session-start moment (a resumed session keeps its id). */
  isStart: ({ event }: { event: SessionInput }) => event.type === 'hook.moment' && event.starts === true,
  /** D25: an ended session still inside its end moment's resume window. */
  inResumeWindow: ({ context, event }: { context: SessionContext; event: SessionInput }) =>
    context.resumeUntil !== undefined && 'at' in event && event.at < context.resumeUntil,
};
