// Pure stepping of the session machine for tests: XState's initialTransition / transition,
// collecting the outputs each step would emit (nothing is run).
import { initialTransition, transition, type SnapshotFrom } from 'xstate';
import { sessionMachine } from '../../src/machines/session.js';
import type { SessionInput } from '../../src/machines/session-input.js';
import type { SessionOutput } from '../../src/machines/session-output.js';
import type { SessionSeed } from '../../src/machines/session-context.js';
import { command } from '../../src/protocol/index.js';
import type { AepCommand } from '../../src/protocol/index.js';

export type Snap = SnapshotFrom<typeof sessionMachine>;

export const VENDOR = 'claude-code';
export const SESSION = 's-1';

export function start(seed: Partial<SessionSeed> = {}): Snap {
  return initialTransition(sessionMachine, { session: SESSION, vendor: VENDOR, ...seed })[0];
}

export function outputsOf(actions: readonly { type: string; params?: unknown }[]): SessionOutput[] {
  return actions.filter((a) => a.type === 'xstate.emit').map((a) => (a.params as { event: SessionOutput }).event);
}

export function step(snap: Snap, input: SessionInput): [Snap, SessionOutput[]] {
  const [next, actions] = transition(sessionMachine, snap, input);
  return [next, outputsOf(actions)];
}

/** Runs inputs in order; returns the final snapshot and every output, in order. */
export function run(inputs: readonly SessionInput[], from: Snap = start()): { snap: Snap; outputs: SessionOutput[] } {
  let snap = from;
  const outputs: SessionOutput[] = [];
  for (const i of inputs) {
    const [next, out] = step(snap, i);
    snap = next;
    outputs.push(...out);
  }
  return { snap, outputs };
}

const SENDER = { agent: 'tester', host: 'test-host' };

export function instructCmd(id: string, text: unknown, session = SESSION): AepCommand {
  return command(SENDER, session, { type: `x.${VENDOR}.control.instruct`, id, data: { text }, capture: 'redacted' });
}

export function respondCmd(
  id: string,
  subject: string,
  answer: Record<string, unknown>,
  session = SESSION,
): AepCommand {
  return command(SENDER, session, { type: 'control.attention.respond', id, subject, cause: subject, data: { answer } });
}

export const instruct = (id: string, text: unknown, at = 1000, gateOpen = true): SessionInput => ({
  type: 'command.instruct',
  at,
  command: instructCmd(id, text),
  gateOpen,
});
export const moment = (hookId: string, at = 2000, eligible = true): SessionInput => ({
  type: 'hook.moment',
  at,
  hookId,
  eligible,
});
export const written = (hookId: string, at = 3000): SessionInput => ({ type: 'reply.written', at, hookId });
export const failed = (hookId: string, at = 3000): SessionInput => ({ type: 'reply.failed', at, hookId });
export const heldPermission = (hookId: string, requestId: string, at = 2000): SessionInput => ({
  type: 'hook.held',
  at,
  hookId,
  requestId,
  hold: 'permission',
  timeoutMs: 55_000,
  request: { kind: 'permission', prompt: 'Run?', subject: 'Bash' },
});
export const heldForm = (hookId: string, requestId: string, at = 2000): SessionInput => ({
  type: 'hook.held',
  at,
  hookId,
  requestId,
  hold: 'elicitation',
  timeoutMs: 55_000,
  request: { kind: 'form', prompt: 'Which?', fields: [{ id: 'name', type: 'string', label: 'Name', required: true }] },
});
export const respond = (id: string, subject: string, answer: Record<string, unknown>, at = 2500): SessionInput => ({
  type: 'command.respond',
  at,
  command: respondCmd(id, subject, answer),
  answeredId: `ans-${id}`,
});
export const end = (hookId: string, at = 9000): SessionInput => ({ type: 'hook.end', at, hookId, reason: 'normal' });
/** The vendor's session-start moment (reopens an ended session). */
export const startMoment = (hookId: string, at = 10_000, eligible = true): SessionInput => ({
  type: 'hook.moment',
  at,
  hookId,
  eligible,
  starts: true,
});
export const timeout = (requestId: string, at = 60_000): SessionInput => ({ type: 'attention.timeout', at, requestId });

export const types = (outputs: readonly SessionOutput[]): string[] => outputs.map((o) => o.type);
