// How lanes join the actor host: a step's lane effects are carried out on them and their answers
// come back as session inputs; what they observe becomes session inputs too. A lane that throws
// counts as unreachable, never as a crash (the hook lane goes on). No durable record of a step
// means no call at all (D22).
import { EMPTY, asapScheduler, from, map, merge, mergeMap, observeOn, type Observable } from 'rxjs';
import { SteeringError, newId, type Rejection } from '../protocol/index.js';
import type { SessionInput } from '../machines/session-input.js';
import type { LaneStarts } from '../machines/command-inputs.js';
import { fromLaneApproval, laneApproval, type LaneCall, type LaneEffect, type LaneHostOptions } from './lane-host.js';
import type { ActorHost } from './actor-host.js';
import type { Effect, SessionItem } from './step-types.js';
import { channelOf, steers, type Lane, type LaneFact } from './lane.js';

export const isLaneEffect = (f: Effect): f is LaneEffect => f.kind === 'lane';

/** What the host is told of the lanes that steer: the deliveries they add and how a session gets one. */
export function laneHostOptions(all: readonly Lane[]): LaneHostOptions | undefined {
  const lanes = all.filter(steers);
  if (lanes.length === 0) return undefined;
  const deliveries = [...new Set(lanes.flatMap((l) => l.deliveries))];
  const handover = lanes.find((l) => l.handsQueue !== undefined)?.handsQueue;
  return {
    native: {
      deliveries,
      hint: lanes.map((l) => l.how).join('; or '),
      ...(handover === undefined ? {} : { handover }),
    },
    interrupts: lanes.some((l) => l.interrupt !== undefined),
    withdraws: lanes.filter((l) => l.withdraw !== undefined).map((l) => l.name),
  };
}

/**
 * D43: the lanes that can start a turn: those that steer, while they reach a session, and the
 * vendor's channel (only under its gate: a tapped channel starts nothing). The hint says how a
 * session gets one, and `note` why the vendor's other ways in cannot (an interactive TUI).
 */
export function laneStarts(all: readonly Lane[], channelGate: boolean, note?: string): LaneStarts | undefined {
  const lanes = all.filter((l) => steers(l) && l.startTurn !== undefined);
  const channel = channelGate ? channelOf(all) : undefined;
  const viaChannel = channel?.startTurn === undefined ? undefined : channel.name;
  if (lanes.length === 0 && viaChannel === undefined) return undefined;
  const hint = [...lanes.map((l) => l.how), ...(note === undefined ? [] : [note])].join('; ');
  return { lanes: lanes.map((l) => l.name), ...(viaChannel === undefined ? {} : { channel: viaChannel }), hint };
}

const input = (session: string, i: SessionInput): SessionItem => ({ kind: 'input', session, input: i });

/** What a call that never reached the lane answers, as the input its verb is answered by. */
interface Answer<T> {
  call: (lane: Lane) => Promise<T> | undefined;
  failed: (detail: string) => T;
  /** What a call that threw answers, where it differs from one never made. */
  threw?: (detail: string) => T;
}

/** A call's answer, as one session input. */
function answered<T>(
  effect: LaneEffect,
  lane: Lane | undefined,
  logged: boolean,
  a: Answer<T>,
  toInput: (o: T) => SessionInput,
): Observable<SessionItem> {
  let started: Promise<T> | undefined;
  try {
    started = logged && lane !== undefined ? a.call(lane) : undefined;
  } catch (cause) {
    started = Promise.reject(cause);
  }
  const outcome: Promise<T> =
    started === undefined
      ? Promise.resolve(
          a.failed(logged ? `no lane for this (${effect.lane ?? 'the vendor channel'})` : 'log not durable'),
        )
      : Promise.resolve(started).catch((cause: unknown) => (a.threw ?? a.failed)(String(cause)));
  return from(outcome).pipe(map((o) => input(effect.session, toInput(o))));
}

const UNREACHABLE = (detail: string): Rejection => ({ reason: 'busy', rule: 'transport-down', detail });

/** Carries one lane effect out; `logged` false: its step is not durable, nothing goes out (D22). */
export function throughLanes(
  lanes: readonly Lane[],
  effect: LaneEffect,
  logged: boolean,
  now: () => number,
): Observable<SessionItem> {
  const lane = effect.lane === undefined ? channelOf(lanes) : lanes.find((l) => l.name === effect.lane);
  const c: LaneCall = effect.call;
  const s = effect.session;
  switch (c.verb) {
    case 'answer':
      // The answer is on the stream already; a request the vendor settled meanwhile finds the hold gone.
      if (logged)
        void Promise.resolve()
          .then(() => lane?.answer?.(s, c.approvalId, c.approved, c.reason))
          .catch(() => undefined);
      return EMPTY;
    case 'steer':
    case 'start':
    case 'send': {
      const req = { session: s, commandId: c.commandId, text: c.text };
      // D31: a queue goes to the lane's own next-turn queue (laneFor sends one only to a lane that has it).
      const call =
        c.verb === 'send'
          ? (l: Lane) => l.send?.({ ...req, ...(c.delivery === undefined ? {} : { delivery: c.delivery }) })
          : c.verb === 'start'
            ? (l: Lane) => l.startTurn?.({ ...req, otherwise: c.otherwise })
            : (l: Lane) => (c.delivery === 'queue' ? l.queue?.(req) : l.steer?.(req));
      return answered(
        effect,
        lane,
        logged,
        { call, failed: (detail) => ({ ok: false as const, reason: 'unreachable' as const, detail }) },
        (o): SessionInput =>
          c.verb === 'send'
            ? { type: o.ok ? 'input.sent' : 'input.failed', at: now(), commandId: c.commandId }
            : {
                type: 'lane.answered',
                at: now(),
                commandId: c.commandId,
                ok: o.ok,
                ...(o.ok ? (o.became === undefined ? {} : { became: o.became }) : { reason: o.reason }),
              },
      );
    }
    case 'interrupt':
      return answered(
        effect,
        lane,
        logged,
        {
          call: (l) => l.interrupt?.(s, c.killTools === true ? { killTools: true } : {}),
          failed: (detail) => ({ ok: false as const, detail }),
        },
        (o) => ({ type: 'cancel.answered', at: now(), commandId: c.commandId, ok: o.ok }),
      );
    case 'withdraw':
      return answered(
        effect,
        lane,
        logged,
        {
          call: (l) =>
            l.withdraw?.({ session: s, commandId: c.target, ...(c.text === undefined ? {} : { text: c.text }) }),
          failed: (error) => ({ error }),
        },
        (o): SessionInput =>
          c.of === 'instruction'
            ? {
                type: 'lane.withdrawn',
                at: now(),
                commandId: c.commandId,
                ...('removed' in o ? { removed: o.removed } : {}),
              }
            : {
                type: 'withdraw.answered',
                at: now(),
                commandId: c.commandId,
                ...('removed' in o ? { removed: o.removed } : { detail: o.error }),
              },
      );
    case 'perform':
      // A channel that throws counts as unreachable (`busy`).
      return answered(
        effect,
        lane,
        logged,
        {
          call: (l) => (l.perform === undefined ? undefined : l.perform(s, c.command).then((r) => ({ r }))),
          failed: (detail) => ({ r: UNREACHABLE(detail) }),
          threw: (detail) => ({ r: UNREACHABLE(`the vendor API failed: ${detail}`) }),
        },
        ({ r }) => ({
          type: 'forward.settled',
          at: now(),
          commandId: c.command.id,
          ...(r === undefined ? {} : { rejection: r }),
        }),
      );
  }
}

export interface LaneFactOptions {
  /** The lanes only observed (a channel tapped without its control gate): their approvals are answered in the vendor's UI alone. */
  observedOnly?: readonly string[];
}

/**
 * The lanes' facts as session inputs. A lane may reach a session before its first hook made it
 * known here (Codex announces a thread before its SessionStart hook): that reach is held and
 * stepped right after the session's first hook. A lost lane reaches every session it reached,
 * voids the approvals it raised, and is said once.
 */
export function fromLaneFacts(
  lanes: readonly Lane[],
  host: ActorHost,
  hooks$: Observable<{ session?: string; at?: number }>,
  onError: (e: SteeringError) => void,
  opts: LaneFactOptions = {},
): Observable<SessionItem> {
  if (lanes.length === 0) return EMPTY;
  const held = new Map<string, Set<string>>();
  const known = (session: string): boolean => host.context(session) !== undefined;
  const reach = (session: string, lane: string, reaches: boolean, at: number): SessionItem =>
    input(session, { type: 'lane.reach', at, lane, reaches });
  const channel = channelOf(lanes)?.name;
  /** Whether an approval a session holds was raised on this lane (an unnamed one: the channel's, from an older log). */
  const raisedOn = (external: string, lane: string): boolean => (fromLaneApproval(external)?.lane ?? channel) === lane;
  const facts = (lane: Lane): Observable<SessionItem> =>
    lane.facts$.pipe(
      mergeMap((f: LaneFact): SessionItem[] => {
        switch (f.kind) {
          case 'attached':
            if (known(f.session)) return [reach(f.session, lane.name, true, f.at)];
            held.set(f.session, new Set([...(held.get(f.session) ?? []), lane.name]));
            return [];
          case 'detached':
            held.get(f.session)?.delete(lane.name);
            return [reach(f.session, lane.name, false, f.at)];
          case 'turn.started':
            return [input(f.session, { type: 'lane.turn', at: f.at, open: true })];
          case 'turn.ended':
            return [
              input(f.session, {
                type: 'lane.turn',
                at: f.at,
                open: false,
                interrupted: f.interrupted,
                ...(lane.keepsUnread === true ? { keepsUnread: true } : {}),
                ...(lane.handsQueue === undefined ? {} : { handover: lane.handsQueue }),
                ...(f.kept?.length ? { kept: f.kept } : {}),
                ...(f.leftRunning?.length ? { leftRunning: f.leftRunning } : {}),
                ...(f.killed?.length ? { killed: f.killed } : {}),
              }),
            ];
          case 'delivered':
            return [
              input(f.session, {
                type: 'lane.delivered',
                at: f.at,
                commandId: f.commandId,
                ref: f.ref,
                ...(f.started === undefined ? {} : { started: f.started }),
                ...(f.backgrounded === undefined ? {} : { backgrounded: f.backgrounded }),
              }),
            ];
          case 'consumed':
            return [input(f.session, { type: 'input.consumed', at: f.at, text: f.text })];
          // An approval the lane raised is a hold answered back through the same lane.
          case 'approval': {
            const request = opts.observedOnly?.includes(lane.name) ? { ...f.request, respondVia: ['oob'] } : f.request;
            return [
              input(f.session, {
                type: 'approval.requested',
                at: f.at,
                requestId: newId(f.at),
                approvalId: laneApproval(lane.name, f.approvalId),
                request,
              }),
            ];
          }
          case 'approval.resolved':
            return [
              input(f.session, {
                type: 'approval.resolved',
                at: f.at,
                approvalId: laneApproval(lane.name, f.approvalId),
                answeredId: newId(f.at),
                ...(f.approved === undefined ? {} : { approved: f.approved }),
              }),
            ];
          case 'lost': {
            if (f.said !== true)
              onError(
                new SteeringError(
                  'EVENT_INVALID',
                  `the ${lane.name} lane is gone (${f.detail}): its sessions keep the hook lane; start them again with it to steer through it`,
                ),
              );
            for (const s of held.values()) s.delete(lane.name);
            return host.sessionKeys().flatMap((s): SessionItem[] => {
              const ctx = host.context(s);
              const out: SessionItem[] = [];
              if (ctx?.lanes?.includes(lane.name) === true) out.push(reach(s, lane.name, false, f.at));
              // Its approvals can no longer be answered from here.
              if (ctx?.holds.some((h) => h.external !== undefined && raisedOn(h.external, lane.name)) === true)
                out.push(input(s, { type: 'transport.lost', at: f.at }));
              return out;
            });
          }
          default:
            return [];
        }
      }),
    );
  // A held reach follows the session's first hook, once that hook's step has run.
  const flushed$ = hooks$.pipe(
    observeOn(asapScheduler),
    mergeMap((h): SessionItem[] => {
      const session = h.session;
      const names = session === undefined ? undefined : held.get(session);
      if (session === undefined || names === undefined || !known(session)) return [];
      held.delete(session);
      return [...names].map((n) => reach(session, n, true, h.at ?? Date.now()));
    }),
  );
  return merge(...lanes.map(facts), flushed$);
}

/** `POST /lanes/<secret>`: every lane that opens on request is readied; their answers, by lane name. */
export async function openLanes(lanes: readonly Lane[]): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const l of lanes.filter(steers)) out[l.name] = l.open === undefined ? {} : await l.open();
  return out;
}
