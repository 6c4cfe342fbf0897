// The console's queue actions (D44): Edit in place, Up/Down, Promote and Pause. Each answers once
// the adapter settled it, and the board shows the change from the stream, never before.
import type { Action, ActionCaller } from '../inspect/server.js';
import type { QueueVerb } from '../machines/command-inputs.js';

type Answer = Awaited<ReturnType<Action>>;
/** Sends one queue verb for the caller and answers its explained outcome. */
type SendVerb = (
  caller: ActionCaller | undefined,
  session: string,
  verb: QueueVerb,
  data: Record<string, unknown>,
) => Promise<Answer>;

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

export function queueActions(queueVerb: SendVerb, invalid: (sentence: string) => Answer): Record<string, Action> {
  return {
    async edit(body, caller) {
      const session = str(body['session']);
      const instruction = str(body['instruction']);
      const text = body['text'];
      if (session === undefined || instruction === undefined || typeof text !== 'string')
        return invalid('give the session, the instruction id and the new text.');
      // Empty or oversize text goes to the adapter, which refuses it with its own code (D2).
      return queueVerb(caller, session, 'edit', { instruction, text });
    },
    async move(body, caller) {
      const session = str(body['session']);
      const instruction = str(body['instruction']);
      const before = str(body['before']);
      const to = str(body['to']);
      if (session === undefined || instruction === undefined || (before === undefined) === (to === undefined))
        return invalid(
          'give the session, the instruction id, and either before (an instruction id) or to (front or back).',
        );
      return queueVerb(caller, session, 'move', { instruction, ...(before ? { before } : { to }) });
    },
    async promote(body, caller) {
      const session = str(body['session']);
      const instruction = str(body['instruction']);
      if (session === undefined || instruction === undefined)
        return invalid('give the session and the instruction id.');
      return queueVerb(caller, session, 'promote', {
        instruction,
        ...(body['idle'] === 'start' ? { idle: 'start' } : {}),
      });
    },
    async hold(body, caller) {
      const session = str(body['session']);
      if (session === undefined || typeof body['paused'] !== 'boolean')
        return invalid('give the session and paused (true or false).');
      return queueVerb(caller, session, 'hold', { paused: body['paused'] });
    },
  };
}
