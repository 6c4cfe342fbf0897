// A new session actor's context: the session and vendor it was started for, the decisions taken
// before it existed (D6), and nothing queued, open or running.
import { decisionsFrom } from './decisions.js';
import type { SessionContext, SessionSeed } from './session-context.js';

export const seedContext = (seed: SessionSeed): SessionContext => ({
  session: seed.session,
  vendor: seed.vendor,
  queue: [],
  inFlight: [],
  holds: [],
  decisions: decisionsFrom(seed.decisions ?? {}),
  inputs: [],
  forwards: [],
  turnOpen: false,
  endedOnce: false,
});
