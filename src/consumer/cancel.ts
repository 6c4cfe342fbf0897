// The cancel verb (`control.cancel {scope: "run"}`, D33): stops the turn a session runs, settled by
// the `run.cancelled` the agent's end of the turn brings, with the tool processes it names.
import type { RelayConsumer } from './connection.js';
import { steer } from './steer.js';
import { deliveryTimeout, surfaceData, type Sender, type Unsettled } from './verb.js';

/** D33: a tool process (a shell command) the agent's turn ran, as `run.cancelled` names it. */
export interface ToolProcessSaid {
  pid?: number;
  /** Absent where the sender's capture ceiling hides command lines (they are redacted-class). */
  command?: string;
}

export type CancelOutcome =
  /**
   * D33: the agent stopped the turn; `cancelled` is its `run.cancelled {by: control}`, with the
   * tool processes the vendor left running (`leftRunning`) or the lane ended on `killTools`.
   */
  | {
      outcome: 'cancelled';
      command: string;
      session: string;
      vendor: string;
      ack: string;
      cancelled: string;
      leftRunning?: ToolProcessSaid[];
      killed?: ToolProcessSaid[];
    }
  | Unsettled;

const toolsSaid = (v: unknown): ToolProcessSaid[] | undefined => {
  if (!Array.isArray(v) || v.length === 0) return undefined;
  return v.map((t: { pid?: unknown; command?: unknown }) => ({
    ...(typeof t?.pid === 'number' ? { pid: t.pid } : {}),
    ...(typeof t?.command === 'string' ? { command: t.command } : {}),
  }));
};

/** D33: `control.cancel {scope: "run"}`, settled by the `run.cancelled` the agent's end of the turn brings. */
export async function sendCancel(
  consumer: RelayConsumer,
  f: Sender,
  req: {
    session: string;
    run?: string;
    timeoutMs: number;
    ackWindowMs?: number;
    killTools?: boolean;
    clear?: boolean;
  },
): Promise<CancelOutcome> {
  const o = await steer(
    consumer,
    f,
    {
      session: req.session,
      text: '',
      timeoutMs: req.timeoutMs,
      ...(req.ackWindowMs === undefined ? {} : { ackWindowMs: req.ackWindowMs }),
    },
    {
      type: () => 'control.cancel',
      hint: 'only a session reached by a way in that can stop a running turn takes it (a native lane or hub, not hooks alone)',
      // D33 `kill_tools`: the lane also ends the tool processes the vendor would leave running.
      // D44 `clear`: what waits in the session's queue is withdrawn too, each with its own cause.
      data: {
        scope: 'run',
        ...(req.killTools === true ? { kill_tools: true } : {}),
        ...(req.clear === true ? { clear: true } : {}),
        ...surfaceData(f),
      },
      settles: /^run\.cancelled$/,
      success: /^run\.cancelled$/,
      capture: 'metadata',
      read: (data) => {
        const left = toolsSaid(data['left_running']);
        const killed = toolsSaid(data['killed']);
        return { ...(left ? { leftRunning: left } : {}), ...(killed ? { killed } : {}) };
      },
      ...(req.run ? { run: req.run } : {}),
    },
  );
  switch (o.outcome) {
    case 'delivered': {
      // What `read` took from the run.cancelled.
      const { leftRunning, killed } = o as { leftRunning?: ToolProcessSaid[]; killed?: ToolProcessSaid[] };
      return {
        outcome: 'cancelled',
        command: o.command,
        session: o.session,
        vendor: o.vendor,
        ack: o.ack,
        cancelled: o.delivered,
        ...(leftRunning ? { leftRunning } : {}),
        ...(killed ? { killed } : {}),
      };
    }
    case 'dropped':
    case 'accepted':
      return deliveryTimeout(o, {});
    default:
      return o;
  }
}
