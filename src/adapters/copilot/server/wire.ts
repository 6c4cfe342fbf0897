// What the `aep-steer run copilot` process and the adapter's server lane say to each other over
// the lane's private socket, one JSON object a line: the run names its session and passes on every
// session event of the Copilot server; the lane asks the run to make server calls, which the run
// makes only for the methods below and only on its own session.
import type { Socket } from 'node:net';

export type WireLine =
  | { type: 'session'; sessionId: string }
  | { type: 'event'; event: CopilotEvent }
  | { type: 'call'; id: number; method: string; params: Record<string, unknown> }
  | { type: 'answer'; id: number; result?: unknown; error?: string };

/** One session event as the server sends it (`session.event` notification's `event`). */
export interface CopilotEvent {
  id?: string;
  type: string;
  data?: Record<string, unknown> | null;
  agentId?: string;
}

/** The server calls the lane may have the run make: sending, the queue's own verbs, abort, permissions. */
export const LANE_METHODS: ReadonlySet<string> = new Set([
  'session.send',
  'session.abort',
  'session.queue.pendingItems',
  'session.queue.withdrawMessage',
  'session.queue.sendNow',
  'session.queue.updateText',
  'session.queue.moveItem',
  'session.queue.setDrainPaused',
  'session.queue.clear',
  'session.permissions.handlePendingPermissionRequest',
]);

export const writeWire = (socket: Socket, line: WireLine): boolean => {
  if (socket.destroyed || !socket.writable) return false;
  socket.write(`${JSON.stringify(line)}\n`);
  return true;
};

/** Splits a socket's bytes into lines and parses each; a malformed line is skipped. */
export function wireReader(onLine: (l: WireLine) => void): (chunk: Buffer) => void {
  let rest = '';
  return (chunk) => {
    rest += chunk.toString('utf8');
    let nl = rest.indexOf('\n');
    while (nl >= 0) {
      const text = rest.slice(0, nl);
      rest = rest.slice(nl + 1);
      nl = rest.indexOf('\n');
      try {
        const l = JSON.parse(text) as WireLine;
        if (l !== null && typeof l === 'object' && typeof l.type === 'string') onLine(l);
      } catch {
        // skipped
      }
    }
  };
}
