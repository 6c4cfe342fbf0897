// How native lanes (D30) join the adapter core: their facts become session inputs, the lane
// effects of a step are carried out on them, and their answers come back as inputs. A lane that
// throws counts as unreachable, never as a crash (the hook lane goes on).
import { EMPTY, asapScheduler, from, map, merge, mergeMap, observeOn, type Observable } from 'rxjs';
import { SteeringError, newId } from '../protocol/index.js';
import { laneApproval } from './lane-host.js';
import type { ActorHost } from './actor-host.js';
import type { Effect, SessionItem } from './step-types.js';
import type { LaneEffect, LaneHostOptions } from './lane-host.js';
import type { LaneFact, LaneOutcome, NativeLane } from './lane.js';

export const isLaneEffect = (f: Effect): f is LaneEffect =>
  f.kind === 'lane.steer' || f.kind === 'lane.interrupt' || f.kind === 'lane.answer' || f.kind === 'lane.withdraw';

/** What the host is told of the lanes: the deliveries they add and how a session gets one. */
export function laneHostOptions(lanes: readonly NativeLane[]): LaneHostOptions | undefined {
  if (lanes.length === 0) return undefined;
  const deliveries = [...new Set(lanes.flatMap((l) => l.deliveries))];
  return {
    native: { deliveries, hint: lanes.map((l) => l.how).join('; or ') },
    interrupts: lanes.some((l) => l.interrupt !== undefined),
    withdraws: lanes.filter((l) => l.withdraw !== undefined).map((l) => l.name),
  };
}

const input = (session: string, i: Extract<SessionItem, { kind: 'input' }>['input']): SessionItem => ({
  kind: 'input',
  session,
  input: i,
});

/** Carries one lane effect out; `logged` false: its step is not durable, nothing goes out (D22). */
export function throughLanes(
  lanes: readonly NativeLane[],
  effect: LaneEffect,
  logged: boolean,
  now: () => number,
): Observable<SessionItem> {
  const lane = lanes.find((l) => l.name === effect.lane);
  // The answer is on the stream already; a request the vendor settled meanwhile finds the hold gone.
  if (effect.kind === 'lane.answer') {
    if (logged)
      void Promise.resolve()
        .then(() => lane?.answer?.(effect.session, effect.approvalId, effect.approved))
        .catch(() => undefined);
    return EMPTY;
  }
  if (effect.kind === 'lane.withdraw') {
    const take = lane?.withdraw?.bind(lane);
    const answer: Promise<boolean | undefined> =
      !logged || take === undefined
        ? Promise.resolve(undefined)
        : Promise.resolve()
            .then(() => take(effect.session, effect.instruction))
            .then((r) => ('removed' in r ? r.removed : undefined))
            .catch(() => undefined);
    return from(answer).pipe(
      map((removed) =>
        input(effect.session, {
          type: 'lane.withdrawn',
          at: now(),
          commandId: effect.commandId,
          ...(removed === undefined ? {} : { removed }),
        }),
      ),
    );
  }
  if (effect.kind === 'lane.interrupt') {
    const stop = lane?.interrupt?.bind(lane);
    const answer =
      !logged || stop === undefined
        ? Promise.resolve({ ok: false })
        : Promise.resolve()
            .then(() => stop(effect.session, effect.killTools === true ? { killTools: true } : {}))
            .catch(() => ({ ok: false }));
    return from(answer).pipe(
      map((o) => input(effect.session, { type: 'cancel.answered', at: now(), commandId: effect.commandId, ok: o.ok })),
    );
  }
  const req = { session: effect.session, commandId: effect.commandId, text: effect.text };
  // D31: a queue goes to the lane's own next-turn queue (laneFor sends one only to a lane that has it).
  const send = effect.delivery === 'queue' ? lane?.queue?.bind(lane) : lane?.steer.bind(lane);
  const outcome: Promise<LaneOutcome> =
    !logged || send === undefined
      ? Promise.resolve({ ok: false, reason: 'unreachable', detail: logged ? 'no such lane' : 'log not durable' })
      : Promise.resolve()
          .then(() => send(req))
          .catch((cause: unknown): LaneOutcome => ({ ok: false, reason: 'unreachable', detail: String(cause) }));
  return from(outcome).pipe(
    map((o) =>
      input(effect.session, {
        type: 'lane.answered',
        at: now(),
        commandId: effect.commandId,
        ok: o.ok,
        ...(o.ok ? {} : { reason: o.reason }),
      }),
    ),
  );
}

/**
 * The lanes' facts as session inputs. A lane may reach a session before its first hook made it
 * known here (Codex announces a thread before its SessionStart hook): that reach is held and
 * stepped right after the session's first hook. A lost lane reaches every session it reached,
 * and is said once.
 */
export function fromLaneFacts(
  lanes: readonly NativeLane[],
  host: ActorHost,
  hooks$: Observable<{ session?: string; at?: number }>,
  onError: (e: SteeringError) => void,
): Observable<SessionItem> {
  if (lanes.length === 0) return EMPTY;
  const held = new Map<string, Set<string>>();
  const known = (session: string): boolean => host.context(session) !== undefined;
  const reach = (session: string, lane: string, reaches: boolean, at: number): SessionItem =>
    input(session, { type: 'lane.reach', at, lane, reaches });
  const facts = (lane: NativeLane): Observable<SessionItem> =>
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
                ...(f.leftRunning?.length ? { leftRunning: f.leftRunning } : {}),
                ...(f.killed?.length ? { killed: f.killed } : {}),
              }),
            ];
          case 'delivered':
            return [input(f.session, { type: 'lane.delivered', at: f.at, commandId: f.commandId, ref: f.ref })];
          // An approval the lane raised is a hold like the Cline hub's, answered back through the lane.
          case 'approval':
            return [
              input(f.session, {
                type: 'approval.requested',
                at: f.at,
                requestId: newId(f.at),
                approvalId: laneApproval(lane.name, f.approvalId),
                request: f.request,
              }),
            ];
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
            const prefix = laneApproval(lane.name, '');
            return host.sessionKeys().flatMap((s): SessionItem[] => {
              const ctx = host.context(s);
              const out: SessionItem[] = [];
              if (ctx?.lanes?.includes(lane.name) === true) out.push(reach(s, lane.name, false, f.at));
              // Its approvals can no longer be answered from here (the hub's loss does the same).
              if (ctx?.holds.some((h) => h.external?.startsWith(prefix) === true) === true)
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
export async function openLanes(lanes: readonly NativeLane[]): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const l of lanes) out[l.name] = l.open === undefined ? {} : await l.open();
  return out;
}
