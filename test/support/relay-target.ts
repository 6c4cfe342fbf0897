// A control-capable target on a real relay link (src/relay/ws-connection.ts) that answers
// commands the way an adapter does (AEP-0004 §3): one decision per (source, id), the recorded
// ack re-sent byte-identically on a retry, `unsupported` for types it does not accept, and for
// control.cancel a cause-linked run.cancelled.
import { SessionEmitter } from '../../src/protocol/build.js';
import { dedupeKey, type AepCommand } from '../../src/protocol/envelope.js';
import { CODE_ATTR } from '../../src/protocol/types.js';
import { connectEmitter, type EmitterLink } from './emitter-link.js';

export interface TestTarget {
  link: EmitterLink;
  /** Commands as received, in order (raw JSON text re-serialised is not used: see `raw`). */
  received: AepCommand[];
  emitter(session: string): SessionEmitter;
  /** Emits `session.started` for a session, which claims it on the relay. */
  claim(session: string): void;
  close(): Promise<void>;
}

export interface TestTargetOptions {
  url: string;
  token?: string;
  agent?: string;
  accepts: string[];
  sessions?: string[];
  instance?: string;
  /**
   * The run each session is running, as an adapter knows it: a control.cancel naming no run
   * stops that one, and one to a session running none is rejected no-active-run (the
   * adapter's rule). Without it, only a command naming its run gets run.cancelled.
   */
  running?: Map<string, string>;
  /** What a control.cancel's run.cancelled also says (D33: the tool processes left or ended). */
  cancelledData?: (cmd: AepCommand) => Record<string, unknown>;
}

export async function startTestTarget(opts: TestTargetOptions): Promise<TestTarget> {
  const agent = opts.agent ?? 'test-target';
  const emitters = new Map<string, SessionEmitter>();
  const acks = new Map<string, string>();
  const received: AepCommand[] = [];
  const link = connectEmitter({
    url: opts.url,
    agent,
    accepts: opts.accepts,
    ...(opts.token ? { token: opts.token } : {}),
    ...(opts.instance ? { instance: opts.instance } : {}),
  });
  const emitter = (session: string): SessionEmitter => {
    let em = emitters.get(session);
    if (!em) {
      em = new SessionEmitter({ agent, session, host: 'test-host' });
      emitters.set(session, em);
    }
    return em;
  };
  link.commands$.subscribe((cmd) => {
    received.push(cmd);
    const key = dedupeKey(cmd);
    const recorded = acks.get(key);
    if (recorded !== undefined) {
      link.sendText(recorded);
      return;
    }
    const em = emitter(cmd.session);
    const run = cmd.type === 'control.cancel' ? (cmd.run ?? opts.running?.get(cmd.session)) : undefined;
    const idle = cmd.type === 'control.cancel' && opts.running !== undefined && run === undefined;
    const ack = !opts.accepts.includes(cmd.type)
      ? em.emit({ type: 'control.rejected', cause: cmd.id, data: { reason: 'unsupported' } })
      : idle
        ? em.emit({
            type: 'control.rejected',
            cause: cmd.id,
            extensions: { [CODE_ATTR]: 'no-active-run' },
            data: { reason: 'refused', detail: 'no active run to cancel' },
          })
        : em.emit({ type: 'control.accepted', cause: cmd.id });
    const text = JSON.stringify(ack);
    acks.set(key, text);
    link.sendText(text);
    if (ack.type === 'control.accepted' && run !== undefined) {
      opts.running?.delete(cmd.session);
      link.send(
        em.emit({
          type: 'run.cancelled',
          run,
          cause: cmd.id,
          severity: 'notice',
          data: { by: 'control', ...opts.cancelledData?.(cmd) },
        }),
      );
    }
  });
  const claim = (session: string) => link.send(emitter(session).emit({ type: 'session.started' }));
  await link.ready();
  for (const s of opts.sessions ?? []) claim(s);
  return { link, received, emitter, claim, close: () => link.close() };
}
