// The inputs of the session-machine tests for a native lane ('serve') beside a hook lane that
// honours `moment` only: the lane reaching the session, its turn opening and ending, and the
// commands a sender sends, each carrying what the lane declares it honours (`native`).
import type { NativeLanes, QueueVerb } from '../../src/machines/command-inputs.js';
import type { SessionInput } from '../../src/machines/session-input.js';
import { command } from '../../src/protocol/index.js';
import { run, SESSION, VENDOR, type Snap } from './session-steps.js';

type TurnEnd = Omit<Extract<SessionInput, { type: 'lane.turn' }>, 'type' | 'at' | 'open' | 'interrupted'>;

export const LANE = 'serve';
const sender = { agent: 'tester', host: 'test-host' };

export const reach: SessionInput = { type: 'lane.reach', at: 500, lane: LANE, reaches: true };
export const opened: SessionInput = { type: 'lane.turn', at: 600, open: true };
/** The lane reaches the session and no turn runs. */
export const idle = (): Snap => run([reach]).snap;
/** The lane reaches the session and its turn runs. */
export const running = (): Snap => run([reach, opened]).snap;

/** `native`: what the lane honours; `turnEnd`: what its turn's end says of what it took. */
export function laneSteps(native: NativeLanes, turnEnd: TurnEnd) {
  const cmd = (verb: string, id: string, data: Record<string, unknown>) =>
    command(sender, SESSION, { type: `x.${VENDOR}.control.${verb}`, id, data, capture: 'redacted' });
  /** An instruct with this data, sent while the hook lane takes `moment` only. */
  const send = (id: string, data: Record<string, unknown>, lane: NativeLanes = native): SessionInput => ({
    type: 'command.instruct',
    at: 1000,
    gateOpen: true,
    deliveries: ['moment'],
    native: lane,
    command: cmd('instruct', id, data),
  });
  const verb = (id: string, v: QueueVerb, data: Record<string, unknown>): SessionInput => ({
    type: 'command.queue',
    verb: v,
    at: 1200,
    gateOpen: true,
    deliveries: ['moment'],
    native,
    command: cmd(v, id, data),
  });
  const ended = (interrupted = false): SessionInput => ({
    type: 'lane.turn',
    at: 2000,
    open: false,
    interrupted,
    ...turnEnd,
  });
  return { send, verb, ended };
}
