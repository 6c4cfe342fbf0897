// D45: the stop verb: ends one spawned worker while its adapter runs. It is AEP's own
// `control.cancel` with `scope: "session"` (the whole session, not its turn), sent to the worker;
// its home acks it at once and the worker's `session.ended` (killed, naming who stopped it, caused
// by this command) settles it once the worker's process is gone. Only the spawner or a holder of
// the spawn right may send it (the relay checks); any other session is refused `end-not-spawned`.
import type { RelayConsumer } from './connection.js';
import { steer } from './steer.js';
import { deliveryTimeout, surfaceData, type Sender, type Unsettled } from './verb.js';

export type StopOutcome =
  /** The worker is gone: `ended` is the stop's record (its `session.ended`, or `x.{vendor}.session.closed`). */
  { outcome: 'stopped'; command: string; session: string; vendor: string; ack: string; ended: string } | Unsettled;

export async function sendStop(
  consumer: RelayConsumer,
  f: Sender,
  req: { session: string; timeoutMs: number; reason?: string },
): Promise<StopOutcome> {
  const o = await steer(
    consumer,
    f,
    { session: req.session, text: '', timeoutMs: req.timeoutMs },
    {
      type: () => 'control.cancel',
      hint: 'only a session an adapter spawned (D45) can be stopped, by its home; `aep-steer cancel` stops a turn',
      data: { scope: 'session', ...(req.reason === undefined ? {} : { reason: req.reason }), ...surfaceData(f) },
      // The stop's own end, or where the agent ended the session first its closing record (home.ts).
      settles: /^(session\.ended|x\.[a-z0-9_-]+\.session\.closed)$/,
      success: /^(session\.ended|x\.[a-z0-9_-]+\.session\.closed)$/,
      capture: req.reason === undefined ? 'metadata' : 'redacted',
    },
  );
  switch (o.outcome) {
    case 'delivered':
      return {
        outcome: 'stopped',
        command: o.command,
        session: o.session,
        vendor: o.vendor,
        ack: o.ack,
        ended: o.delivered,
      };
    case 'dropped':
    case 'accepted':
      return deliveryTimeout(o, {});
    default:
      return o;
  }
}
