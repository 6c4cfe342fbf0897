// D46: who settled something, and through what. The identity is the command's `agent`, which the
// relay checks against the token's bound identity (D19) before it forwards the command; the
// surface is what the sender's software says it is, and only the sender surfaces may be said on a
// command: `agent`, `timeout` and `policy` are the adapter's own, never a sender's.
import type { AepCommand, Rejection } from '../protocol/index.js';

const SURFACES = ['cli', 'console', 'link', 'mcp', 'agent', 'policy', 'timeout'] as const;
type Surface = (typeof SURFACES)[number];

/** The surfaces a command may name; a command that names none came from a command line. */
const SENDER_SURFACES: readonly Surface[] = ['cli', 'console', 'link', 'mcp'];
const DEFAULT_SURFACE: Surface = 'cli';

export interface DecidedBy {
  identity: string;
  surface: Surface;
  /** The paired device, when the surface knows one. */
  device?: string;
}

/** The person at the agent's own UI: the adapter cannot authenticate them, only report that they answered. */
export const AT_AGENT: DecidedBy = Object.freeze({ identity: 'local-user', surface: 'agent' }) as DecidedBy;
/** Nobody answered in time: the adapter's own timer ended the request. */
export const BY_TIMEOUT: DecidedBy = Object.freeze({ identity: 'adapter', surface: 'timeout' }) as DecidedBy;
/** The agent side ended the request without a person's answer (the channel was lost, the turn ended). */
export const BY_AGENT_SIDE: DecidedBy = Object.freeze({ identity: 'adapter', surface: 'agent' }) as DecidedBy;

const DEVICE_MAX = 64;

const SURFACE_REJECT = {
  reserved: {
    reason: 'invalid',
    rule: 'surface-reserved',
    detail: `surface agent, policy and timeout are the adapter's own; a command may name ${SENDER_SURFACES.join(', ')}`,
  },
  invalid: {
    reason: 'invalid',
    rule: 'surface-invalid',
    detail: `surface must be one of ${SENDER_SURFACES.join(', ')}; device, when given, a name of at most ${DEVICE_MAX} characters`,
  },
} as const satisfies Record<string, Rejection>;

const dataOf = (c: AepCommand): Record<string, unknown> =>
  typeof c.data === 'object' && c.data !== null ? (c.data as Record<string, unknown>) : {};

/**
 * The D46 record of a settling command: its relay-checked sender and the surface it names
 * (`data.surface`, `data.device`), or why the command may not name them. Reusable by every verb
 * that settles an instruction or a request: call it once the command is accepted, and carry the
 * result onto the event that settles it (`decidedByData`).
 */
export function decidedByOf(command: AepCommand): DecidedBy | Rejection {
  const d = dataOf(command);
  const raw = d.surface ?? DEFAULT_SURFACE;
  if (typeof raw !== 'string' || !(SURFACES as readonly string[]).includes(raw)) return SURFACE_REJECT.invalid;
  if (!SENDER_SURFACES.includes(raw as Surface)) return SURFACE_REJECT.reserved;
  const device = d.device;
  if (device !== undefined && (typeof device !== 'string' || device === '' || device.length > DEVICE_MAX))
    return SURFACE_REJECT.invalid;
  return { identity: command.agent, surface: raw as Surface, ...(device === undefined ? {} : { device }) };
}

export const isRejection = (x: DecidedBy | Rejection): x is Rejection => 'rule' in x;

/** The rejection a command's surface claim earns, if any. */
export function surfaceRefusal(command: AepCommand): Rejection | undefined {
  const by = decidedByOf(command);
  return isRejection(by) ? by : undefined;
}

/** `decided_by` as it goes on an event: metadata, a watcher at any level sees it (D46). */
export function decidedByData(by: DecidedBy): Record<string, string> {
  return { identity: by.identity, surface: by.surface, ...(by.device === undefined ? {} : { device: by.device }) };
}

/** Reads a `decided_by` back from an event's data (audit, pending, console); undefined when absent or malformed. */
export function readDecidedBy(data: Record<string, unknown> | undefined): DecidedBy | undefined {
  const v = data?.['decided_by'];
  if (typeof v !== 'object' || v === null) return undefined;
  const { identity, surface, device } = v as Record<string, unknown>;
  if (typeof identity !== 'string' || typeof surface !== 'string') return undefined;
  if (!(SURFACES as readonly string[]).includes(surface)) return undefined;
  return { identity, surface: surface as Surface, ...(typeof device === 'string' ? { device } : {}) };
}

/** One line for a person: `alice via console (phone)`. */
export const describeDecidedBy = (by: DecidedBy): string =>
  `${by.identity} via ${by.surface}${by.device === undefined ? '' : ` (${by.device})`}`;
