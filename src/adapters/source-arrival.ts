// An arrival from a bridge source (a vendor's server followed over its own stream, not a hook): no
// one waits on a reply, so every reply is a no-op and a failure is only reported.
import { newId, type SteeringError } from '../protocol/index.js';
import type { HookArrival } from '../streams/hook-endpoint.js';

const NO_REPLY = async (): Promise<boolean> => true;

export function sourceArrival(
  body: Record<string, unknown>,
  at: number,
  report: (e: SteeringError) => void,
): HookArrival {
  return {
    id: newId(at),
    at,
    body,
    respond: NO_REPLY,
    neutral: NO_REPLY,
    failOpen: (err) => {
      report(err);
      return NO_REPLY();
    },
    hold: () => {},
    closed: Promise.resolve(),
  };
}
