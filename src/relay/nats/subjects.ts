// Names in the engine: streams, the claims bucket and subjects under one namespace, and the
// session token that puts an AEP session id into one subject token. Session ids may hold `.`,
// `*`, `>`, spaces or anything else, which NATS subjects reserve, so the id is base64url-encoded
// (injective, subject-safe); a long id is hashed instead, as a subject has a length limit.
import { createHash } from 'node:crypto';
import { SteeringError } from '../../protocol/errors.js';

/** Longest encoded id kept readable; longer ones become `h` + SHA-256 hex. */
const MAX_TOKEN = 200;

export function sessionToken(session: string): string {
  const b = Buffer.from(session, 'utf8').toString('base64url');
  return b.length <= MAX_TOKEN ? `s${b}` : `h${createHash('sha256').update(session, 'utf8').digest('hex')}`;
}

/** `Nats-Msg-Id` for admission dedupe: a printable digest of `(source, id)`. */
export const admissionId = (source: string, id: string): string =>
  createHash('sha256').update(`${source}\u0000${id}`, 'utf8').digest('hex');

export interface Names {
  namespace: string;
  /** History: `<ns>.ev.<token>.p` (positioned) and `.u` (seq-less), each its own ring. */
  eventsStream: string;
  /** Forwarded commands: `<ns>.cmd.<node>.<token>`. */
  commandsStream: string;
  /** Claims and node leases. */
  claimsBucket: string;
  events(token: string, positioned: boolean): string;
  /** Both rings of one session (one filter subject, the 2.9 floor). */
  session(token: string): string;
  allEvents: string;
  command(node: string, token: string): string;
  commandsFor(node: string): string;
  /** Copies fanned out but not stored (agent-scoped events, redeliveries): core NATS, no stream. */
  copy(token: string): string;
  allCopies: string;
  /** Refusals a node sends back to the sender's node (core NATS). */
  back(node: string): string;
  /**
   * D41 (core NATS): a command's copy sent to its target's node ahead of its stored one, as
   * `<ns>.early.<node>.<token>`, and the word that its writes ended, as `<ns>.early.<node>.end`.
   */
  early(node: string, token: string): string;
  earlyFor(node: string): string;
}

export function names(namespace = 'aep'): Names {
  if (!/^[A-Za-z0-9_-]{1,32}$/.test(namespace)) {
    throw new SteeringError(
      'CONFIG_INVALID',
      `NATS namespace must be 1-32 letters, digits, _ or -, got "${namespace}"`,
    );
  }
  const ns = namespace;
  const up = ns.toUpperCase().replace(/-/g, '_');
  return {
    namespace: ns,
    eventsStream: `${up}_EVENTS`,
    commandsStream: `${up}_CMD`,
    claimsBucket: `${ns.replace(/-/g, '_')}_claims`,
    events: (t, positioned) => `${ns}.ev.${t}.${positioned ? 'p' : 'u'}`,
    session: (t) => `${ns}.ev.${t}.*`,
    allEvents: `${ns}.ev.>`,
    command: (node, t) => `${ns}.cmd.${node}.${t}`,
    commandsFor: (node) => `${ns}.cmd.${node}.>`,
    copy: (t) => `${ns}.copy.${t}`,
    allCopies: `${ns}.copy.>`,
    back: (node) => `${ns}.back.${node}`,
    early: (node, t) => `${ns}.early.${node}.${t}`,
    earlyFor: (node) => `${ns}.early.${node}.>`,
  };
}
