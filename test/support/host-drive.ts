// Drives an ActorHost through a list of small operations, as a live adapter would step it (hooks,
// instructs, retries, answers to holds, reply write results, timeouts, window ticks), and keeps
// what it logged: for the replay properties, which rebuild a host from those records.
import type { ActorHost } from '../../src/streams/actor-host.js';
import type { SessionItem, StepResult } from '../../src/streams/step-types.js';
import type { LogRecord } from '../../src/streams/log.js';
import type { AepCommand } from '../../src/protocol/index.js';
import type { VendorSurface } from '../../src/streams/surface.js';
import { hookBody } from './fake-surface.js';
import { instructCmd, respondCmd } from './session-steps.js';

export type HostOp =
  | { op: 'hook'; s: number; h: number }
  | { op: 'instruct'; s: number; id: number; t: number }
  | { op: 'retry'; n: number }
  | { op: 'respond'; s: number; answer: number }
  | { op: 'write'; ok: boolean }
  | { op: 'timeout'; s: number }
  | { op: 'tick'; s: number }
  /** A TTL tick (D10, D26) at the script's `ttlMs`; nothing when the script sets none. */
  | { op: 'ttl'; s: number }
  /** Time passes with nothing arriving. */
  | { op: 'wait'; ms: number }
  | { op: 'recover' };

export interface HostScript {
  sessions: readonly string[];
  texts: readonly unknown[];
  /** Hook event names with extra body fields. */
  hooks: readonly (readonly [string, Record<string, unknown>])[];
  answers: readonly Record<string, unknown>[];
  /** The first step's time (each op adds 7 ms); 1,000 unless given. */
  start?: number;
  /** Builds the commands (stamped at the step's time, say); the test helpers' otherwise. */
  instruct?: (id: string, text: unknown, session: string, at: number) => AepCommand;
  respond?: (id: string, subject: string, answer: Record<string, unknown>, session: string, at: number) => AepCommand;
  /** The instruction TTL the `ttl` op ticks with. */
  ttlMs?: number;
  /** Sees every step's result, recoveries included. */
  onStep?: (r: StepResult) => void;
}

export interface Driven {
  records: LogRecord[];
  commands: AepCommand[];
  /** A session went from ended back to open on a start moment. */
  reopened: boolean;
  /** A session was spawned holding decisions taken while it had no cell (orphans, D6). */
  seeded: boolean;
}

export function driveHost(host: ActorHost, surface: VendorSurface, script: HostScript, ops: readonly HostOp[]): Driven {
  const out: Driven = { records: [], commands: [], reopened: false, seeded: false };
  const replies: { session: string; hookId: string }[] = [];
  let at = script.start ?? 1_000;
  let hookN = 0;
  const instruct = script.instruct ?? ((id, text, session) => instructCmd(id, text, session));
  const respond = script.respond ?? ((id, subject, answer, session) => respondCmd(id, subject, answer, session));
  const apply = (item: SessionItem) => {
    const r = host.step(item);
    script.onStep?.(r);
    out.records.push(...r.records);
    for (const e of r.effects)
      if (e.kind === 'reply' && e.confirm && e.session) replies.push({ session: e.session, hookId: e.hookId });
  };
  for (const o of ops) {
    at += 7;
    const session = script.sessions['s' in o ? o.s : 0]!;
    if (o.op === 'hook') {
      const [name, extra] = script.hooks[o.h]!;
      const wasEnded = host.stateValue(session) === 'ended';
      if (host.context(session) === undefined && host.exportState().orphans.some(([s]) => s === session))
        out.seeded = true;
      apply({
        kind: 'hook',
        session,
        hookId: `hook-${hookN++}`,
        at,
        hook: surface.classify(hookBody(name, session, extra)),
      });
      if (wasEnded && host.stateValue(session) !== 'ended') out.reopened = true;
    } else if (o.op === 'instruct') {
      const c = instruct(`c${o.id}`, script.texts[o.t], session, at);
      out.commands.push(c);
      apply({ kind: 'command', session, at, command: c });
    } else if (o.op === 'retry') {
      const c = out.commands[o.n % Math.max(1, out.commands.length)];
      if (c) apply({ kind: 'command', session: c.session!, at, command: c });
    } else if (o.op === 'respond') {
      const hold = host.context(session)?.holds[0];
      if (!hold) continue;
      const c = respond(`r${at}`, hold.requestId, script.answers[o.answer]!, session, at);
      out.commands.push(c);
      apply({ kind: 'command', session, at, command: c });
    } else if (o.op === 'write') {
      const reply = replies.shift();
      if (reply)
        apply({
          kind: 'input',
          session: reply.session,
          input: { type: o.ok ? 'reply.written' : 'reply.failed', at, hookId: reply.hookId },
        });
    } else if (o.op === 'timeout') {
      const hold = host.context(session)?.holds[0];
      if (hold) apply({ kind: 'input', session, input: { type: 'attention.timeout', at, requestId: hold.requestId } });
    } else if (o.op === 'tick') {
      apply({ kind: 'input', session, input: { type: 'window.tick', at } });
    } else if (o.op === 'ttl') {
      if (script.ttlMs !== undefined)
        apply({ kind: 'input', session, input: { type: 'ttl.tick', at, ttlMs: script.ttlMs } });
    } else if (o.op === 'wait') {
      at += o.ms;
    } else {
      for (const r of host.recover(at)) {
        script.onStep?.(r);
        out.records.push(...r.records);
      }
    }
  }
  return out;
}
