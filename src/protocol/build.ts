// Builders: ids, time stamps, sources, the session emitter that owns (epoch, seq), commands.
// Builders throw before anything invalid leaves the process (AEP-0001 §5.4: a producer refuses).
import { hostname } from 'node:os';
import {
  AEP_VERSION,
  CORE_ATTRIBUTES,
  type AepCommand,
  type AepEvent,
  type CaptureLevel,
  type EventData,
  type ExtensionValue,
  type SessionEvent,
  type Severity,
} from './envelope.js';
import { SteeringError } from './errors.js';
import { scopeOf } from './types.js';
import { ulidSource } from './ids.js';
import { isAepType, suppliedIssue } from './validate.js';

const ulid = ulidSource();

/** A new monotonic ULID (time-sortable, strictly increasing within this process). */
export const newId = (at?: number): string => ulid(at);

/** RFC 3339 UTC with milliseconds, as the reference SDK writes it. */
// Events built in the same millisecond share one formatted time.
let lastMs = Number.NaN;
let lastIso = '';
export const timestamp = (ms: number = Date.now()): string => {
  if (ms !== lastMs) {
    lastIso = new Date(ms).toISOString();
    lastMs = ms;
  }
  return lastIso;
};

/**
 * Correlation ids are sanitised into a URI path segment (AEP-0001 §5.3): a safe name passes
 * unchanged; otherwise every UTF-8 byte outside [A-Za-z0-9._-] is percent-encoded, and so is a
 * leading `.`.
 */
function segment(s: string): string {
  if (/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(s)) return s;
  let out = '';
  for (const byte of Buffer.from(s, 'utf8')) {
    const c = String.fromCharCode(byte);
    out += /[A-Za-z0-9._-]/.test(c) ? c : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out.replace(/^\./, '%2E');
}

export function sourceUri(agent: string, session?: string, host: string = hostname()): string {
  const base = `aep://${segment(host)}/agent/${segment(agent)}`;
  return session === undefined ? base : `${base}/session/${segment(session)}`;
}

const EXTENSION_NAME = /^[a-z0-9]{1,20}$/;
const CORE = new Set<string>(CORE_ATTRIBUTES);

/** Refuses a bad extension attribute with an error rather than emitting it (AEP-0001 §5.4). */
export function checkExtensions(ext: Record<string, unknown> | undefined): Record<string, ExtensionValue> {
  const out: Record<string, ExtensionValue> = {};
  for (const [name, value] of Object.entries(ext ?? {})) {
    if (CORE.has(name))
      throw new SteeringError('EXTENSION_INVALID', `extension attribute "${name}" collides with a core attribute`);
    if (!EXTENSION_NAME.test(name))
      throw new SteeringError('EXTENSION_INVALID', `extension attribute name "${name}" must match [a-z0-9]{1,20}`);
    const ok =
      typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isInteger(value));
    if (!ok)
      throw new SteeringError(
        'EXTENSION_INVALID',
        `extension attribute "${name}" must be a string, integer or boolean`,
      );
    out[name] = value as ExtensionValue;
  }
  return out;
}

export interface EventFields<T extends string = string, D extends EventData = EventData> {
  type: T;
  data?: D;
  subject?: string;
  run?: string;
  step?: string;
  cause?: string;
  traceparent?: string;
  severity?: Severity;
  capture?: CaptureLevel;
  /** Extension attributes; refused with an error when malformed. */
  extensions?: Record<string, unknown>;
  /** Override the id (replay, tests); a new ULID otherwise. */
  id?: string;
  /** Milliseconds since the epoch; now otherwise. */
  at?: number;
}

const refuse = (f: Record<string, unknown>): void => {
  const issue = suppliedIssue(f);
  if (issue) throw new SteeringError('EVENT_INVALID', `${issue.rule}: ${issue.message}`);
};

/** The type's scope, once the type is known to be one (a builder's first check). */
function scopeOfType(type: unknown): ReturnType<typeof scopeOf> {
  if (typeof type !== 'string' || !isAepType(type))
    throw new SteeringError('EVENT_INVALID', `type "${String(type)}" does not match the AEP type grammar`);
  return scopeOf(type);
}

function assemble(base: Pick<AepEvent, 'source' | 'agent'> & Partial<AepEvent>, f: EventFields): AepEvent {
  // Only what the caller supplied is checked; base (agent, session, source) was checked once
  // when its emitter or command was set up, the rest is made here (see suppliedIssue).
  refuse(f as unknown as Record<string, unknown>);
  const ext = checkExtensions(f.extensions);
  const e: AepEvent = {
    aep: AEP_VERSION,
    id: f.id ?? newId(f.at),
    type: f.type,
    time: timestamp(f.at),
    source: base.source,
    agent: base.agent,
  };
  // Attribute order follows AEP-0001 §5 so serialised events read the same everywhere.
  if (f.subject !== undefined) e.subject = f.subject;
  if (base.session !== undefined) e.session = base.session;
  if (f.run !== undefined) e.run = f.run;
  if (f.step !== undefined) e.step = f.step;
  if (base.seq !== undefined) e.seq = base.seq;
  if (base.epoch !== undefined) e.epoch = base.epoch;
  if (f.cause !== undefined) e.cause = f.cause;
  if (f.traceparent !== undefined) e.traceparent = f.traceparent;
  if (f.severity !== undefined) e.severity = f.severity;
  if (f.capture !== undefined) e.capture = f.capture;
  if (f.data !== undefined) e.data = f.data;
  Object.assign(e, ext);
  return e;
}

/**
 * Owns one session's position: every sequenced event it builds takes the next `seq` in its
 * `epoch` (AEP-0001 §7). A restarted process continues with a higher epoch (D11).
 */
export class SessionEmitter {
  readonly agent: string;
  readonly session: string;
  readonly source: string;
  readonly epoch: number;
  private nextSeq: number;

  constructor(opts: {
    agent: string;
    session: string;
    epoch?: number;
    startSeq?: number;
    source?: string;
    host?: string;
  }) {
    this.agent = opts.agent;
    this.session = opts.session;
    this.epoch = opts.epoch ?? 0;
    this.nextSeq = opts.startSeq ?? 0;
    this.source = opts.source ?? sourceUri(opts.agent, opts.session, opts.host);
    refuse({ agent: this.agent, session: this.session, source: this.source });
    if (!Number.isInteger(this.epoch) || this.epoch < 0 || !Number.isInteger(this.nextSeq) || this.nextSeq < 0) {
      throw new SteeringError('EVENT_INVALID', 'attr-type: epoch and seq must be integers >= 0 (AEP-0001 §7)');
    }
  }

  /** The position the next event will take. */
  get position(): { epoch: number; seq: number } {
    return { epoch: this.epoch, seq: this.nextSeq };
  }

  emit<T extends string, D extends EventData>(f: EventFields<T, D>): SessionEvent<T, D> {
    const scope = scopeOfType(f.type);
    if (scope !== 'session')
      throw new SteeringError('EVENT_INVALID', `a session emitter cannot emit ${scope}-scoped type ${f.type}`);
    const e = assemble(
      { source: this.source, agent: this.agent, session: this.session, seq: this.nextSeq, epoch: this.epoch },
      f,
    );
    this.nextSeq += 1;
    return e as SessionEvent<T, D>;
  }
}

/** Builds an agent-scoped event (`agent.*`): no session, run, step or seq. */
export function agentEvent<T extends string, D extends EventData>(
  agent: string,
  f: EventFields<T, D>,
  host?: string,
): AepEvent<T, D> {
  if (scopeOfType(f.type) !== 'agent') throw new SteeringError('EVENT_INVALID', `${f.type} is not agent-scoped`);
  const source = sourceUri(agent, undefined, host);
  refuse({ agent, source });
  return assemble({ source, agent }, f) as AepEvent<T, D>;
}

/**
 * Builds a command (AEP-0004 §2): `session` is the target, no `seq`, `agent` is the sender,
 * `source` names the sender without a session segment.
 */
export function command<T extends string, D extends EventData>(
  sender: { agent: string; source?: string; host?: string },
  session: string,
  f: EventFields<T, D>,
): AepCommand<T, D> {
  if (scopeOfType(f.type) !== 'command') throw new SteeringError('EVENT_INVALID', `${f.type} is not a command type`);
  const source = sender.source ?? sourceUri(sender.agent, undefined, sender.host);
  refuse({ agent: sender.agent, session, source });
  return assemble({ source, agent: sender.agent, session }, f) as AepCommand<T, D>;
}
