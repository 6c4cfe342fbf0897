// The relay's shared shapes, a leaf the core, its parts, the stores and the fabric all import: a
// live connection (Peer), an event as received, a refusal, a roster row, and what a multi-node
// store offers the core (Fabric).
import type { AepEvent } from '../protocol/envelope.js';
import type { RelayRefusalCode } from '../protocol/errors.js';
import type { Principal } from './acl.js';
import type { ClaimHolder } from './claims.js';
import type { Claimant } from './routing.js';

/** A live duplex connection as routing and the roster see it. */
export interface Peer extends Claimant, ClaimHolder {
  claims: Set<string>;
  /** Who authenticated on this connection (D19). */
  principal: Principal;
  identity: { agent?: string; instance?: string };
  /** `hello.capabilities.control`, verbatim for the roster (AEP-0003 §4.1). */
  control: unknown;
  emits: unknown;
  /** Sends text as one frame, unchanged (byte-identical forwarding, AEP-0004 §4). */
  sendText(text: string): void;
}

/** One received event, as the core takes it from any binding. */
export interface Incoming {
  event: AepEvent;
  /** The event as served: the received text with line breaks removed. */
  line: string;
  /** `line` as the UTF-8 bytes received (a WebSocket frame without line breaks), forwarded as they are. */
  bytes?: Buffer;
}

/** A refusal on the relay's side: an `error` frame on WebSocket, an HTTP error on ingest. */
export interface Refusal {
  code: RelayRefusalCode;
  detail: string;
  /** False when sending the same event again cannot change the answer (the token lacks the right). */
  retry?: false;
  /** D41: a command was handed to its target before its write failed: whether it took effect is unknown. */
  outcome?: 'unknown';
}

export interface RosterEntry {
  session: string;
  agent?: string;
  instance?: string;
  control?: unknown;
  emits?: unknown;
  /** D26: `ended` once the session's end moment passed (and no start moment reopened it). */
  state?: 'live' | 'ended';
  /** `time` of the session's latest event from its agent (D37: commands never refresh it). */
  last_event_at?: string;
  /** Accepted instructions not yet delivered or dropped. */
  queued?: number;
  /** D37: live, yet silent for longer than the vendor's stale window (`stale_after_ms`). */
  stale?: boolean;
  stale_after_ms?: number;
  /** D37: the working directory, and the first prompt's first line (only to a viewer that may see `redacted`). */
  cwd?: string;
  title?: string;
  /** D30: the lanes that reach the session: `hook`, and a native one (`app-server`) while it does. */
  lanes?: string[];
  /** D43: an instruct with `idle: "start"` can start a turn in it (a lane that can reaches it). */
  startable?: boolean;
  /** D43: a turn runs in it now (`run.started` with no end yet): a start would go into that turn. */
  running?: true;
  /** D44: the sender paused the session's queue: nothing but a steer is delivered until resumed. */
  paused?: true;
  /** D45: who spawned the session (identity, spawn command, the spawner's own session). */
  spawned_by?: { identity: string; command: string; parent?: string };
  /**
   * No live connection claims the session: an entry from the relay's history, only when the
   * roster request asks for them (`offline: true`); a command to it is refused `no-route`.
   */
  offline?: true;
}

/** What a multi-node store does beyond history; the core calls it at the points named. */
export interface Fabric {
  /** Called once by the core: where remote copies and commands for local peers go. */
  attach(local: FabricLocal): void;
  /**
   * A copy for the other nodes' live fan-out: of what is not stored (agent-scoped, redeliveries),
   * and of an answer to a command ahead of its stored copy.
   */
  share(line: string, e: { session?: string }, answer?: boolean): void;
  /** A local peer claimed a session (the core's claim table said yes). */
  claim(peer: Peer, session: string): void;
  /**
   * A local peer went away: its claims lapse as the core's do (at once for its identity, after the lease for others).
   */
  release(peer: Peer): void;
  /** D19 across nodes: why `who` may not claim `session` because of another node's claim, or undefined. */
  rival(session: string, who: Principal): string | undefined;
  /** The identity owning `session` on another node, live or within its lease. */
  ownerOf(session: string): string | undefined;
  /** Claimants held by other nodes, as peers whose `sendText` forwards to their node. */
  remotePeers(): Iterable<Peer>;
  /** Why other nodes' claims cannot be read now (D38: no claimant found then is no `no-route`), or undefined. */
  unheard?(): string | undefined;
  /** Forwards a command frame to a remote claimant; if it left meanwhile, its node refuses it to `replyTo`. */
  forward(target: Peer, frame: string, replyTo?: Peer): void;
  /**
   * D41 across nodes: forwards a command before its history write is confirmed, the target's node
   * holding its answers until then; `written` once it is, `ended` once the write ended either
   * way. Undefined when the target is this node's (it got the frame at once).
   */
  forwardEarly?(target: Peer, frame: string, replyTo?: Peer): { written(): void; ended(): void } | undefined;
}

export interface FabricLocal {
  /**
   * Live fan-out of what another node received: `stored`, from the history feed, in order;
   * `copy`, not stored (agent-scoped, a redelivery); `answer`, an answer's early copy (crossed.ts).
   */
  fanOut(line: string, via: 'stored' | 'copy' | 'answer'): void;
  /** The local peers (a forwarded command finds its target among them). */
  peers(): Iterable<Peer>;
  /** How long a closed claimant's claim keeps other identities out (D19, discovery's `claims.lease_ms`). */
  claimLeaseMs: number;
  /** D41 across nodes: answers to a command handed here early wait (`pending`) until its writes ended. */
  held?(commandId: string, pending: boolean): void;
}
