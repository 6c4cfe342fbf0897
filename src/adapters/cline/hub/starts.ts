// D43 on the Cline hub: a start is hub `session.send_input {delivery: "queue"}`. Cline 3.0.65 takes a
// queued prompt only when the agent can begin a run, and then begins one with it as the user
// message (cline-hub-observed §1.4, e2e/cline-start), so the hub itself decides whether the session
// is idle, at the moment the input arrives. What it decided shows in the order of what it sends
// back: while handling the send_input it publishes `run.started` carrying the command's request id
// (every send_input does; no run boundary), then `session.pending_prompts` listing the prompt under
// the id it gave it, and, when the agent is idle, `session.pending_prompt_submitted` for that id,
// all before its reply. A prompt submitted before the reply began the turn; one still waiting at
// the reply waits behind a turn that began meanwhile, and goes in as the start's `otherwise`.
import { Subject, type Observable } from 'rxjs';
import type { LaneFact } from '../../../streams/lane.js';
import type { HubConnection, HubEvent } from './connection.js';
import { arr, obj, str } from '../../hook-input.js';

/** Starts awaiting their receipt, at most (the oldest is forgotten: one the hub never ran). */
const STARTS_KEPT = 50;

interface Start {
  session: string;
  commandId: string;
  text: string;
  /** The send_input's request id, repeated in the hub's `run.started` for it. */
  requestId: string;
  /** The hub's id for the pending prompt, from the listing that follows that `run.started`. */
  promptId?: string;
  /** The hub replied to the send_input: a submission after this did not begin the turn. */
  replied: boolean;
  /** The hub submitted it to the agent (its receipt went out). */
  submitted: boolean;
}

export interface StartBook {
  /** Books a start whose send_input just went out, before its reply can come back. */
  open(req: { session: string; commandId: string; text: string }, requestId: string): Start;
  close(start: Start): void;
  /** The starts' receipts: `delivered`, naming the hub's prompt id. */
  readonly facts$: Observable<LaneFact>;
  /** The hub connection dropped: what it held is unknown now (the core says delivery-unknown). */
  clear(): void;
}

export function startBook(hub: HubConnection, now: () => number): StartBook {
  const starts: Start[] = [];
  /** Per session, the start whose `run.started` came and whose listing is next. */
  const listing = new Map<string, Start>();
  const facts$ = new Subject<LaneFact>();
  const close = (s: Start): void => {
    const i = starts.indexOf(s);
    if (i >= 0) starts.splice(i, 1);
    if (listing.get(s.session) === s) listing.delete(s.session);
  };

  function onEvent(e: HubEvent): void {
    const session = e.sessionId;
    if (session === undefined) return;
    switch (e.event) {
      case 'run.started': {
        const requestId = str(e.payload.requestId);
        if (requestId === undefined || str(e.payload.clientId) !== hub.clientId) return;
        const s = starts.find((x) => x.requestId === requestId && x.session === session && !x.replied);
        if (s !== undefined) listing.set(session, s);
        return;
      }
      case 'session.pending_prompts': {
        const s = listing.get(session);
        if (s === undefined) return;
        listing.delete(session);
        // An equal text already pending took this one in (the hub merges them): that entry holds it.
        s.promptId = str(
          arr(e.payload.prompts)
            .map(obj)
            .find((p) => p.prompt === s.text)?.id,
        );
        return;
      }
      case 'session.pending_prompt_submitted': {
        const p = obj(e.payload.prompt);
        const id = str(p.id);
        // By the hub's id where it was listed; by the text only where it never was.
        const s = starts.find(
          (x) =>
            x.session === session &&
            !x.submitted &&
            (x.promptId === undefined ? p.prompt === x.text : x.promptId === id),
        );
        if (s === undefined) return;
        s.submitted = true;
        // Taken after its reply: the turn was not its own; the answer already said what it became.
        if (s.replied) close(s);
        facts$.next({
          kind: 'delivered',
          session,
          at: now(),
          commandId: s.commandId,
          ref: id ?? s.promptId ?? s.requestId,
          started: !s.replied,
        });
        return;
      }
      default:
        return;
    }
  }
  hub.events$.subscribe(onEvent);

  return {
    open(req, requestId) {
      const s: Start = { ...req, requestId, replied: false, submitted: false };
      starts.push(s);
      if (starts.length > STARTS_KEPT) close(starts[0]!);
      return s;
    },
    close,
    facts$: facts$.asObservable(),
    clear() {
      starts.length = 0;
      listing.clear();
    },
  };
}
