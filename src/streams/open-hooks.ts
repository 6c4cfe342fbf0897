// The hooks still owed a reply, one entry per hook: the arrival that will carry the reply (the
// bus writes it) and what the vendor table read from it (the session's steps answer from it).
// One map for both: an entry goes once its reply is written and no step needs its hook any more.
import type { HookArrival } from './hook-endpoint.js';
import type { ClassifiedHook } from './surface.js';

interface OpenEntry {
  arrival: HookArrival | undefined;
  hook: ClassifiedHook | undefined;
}

export class OpenHooks {
  private readonly open = new Map<string, OpenEntry>();

  /** A hook call came in: its reply is owed from now on. */
  arrived(arrival: HookArrival): void {
    const e = this.open.get(arrival.id);
    if (e) e.arrival = arrival;
    else this.open.set(arrival.id, { arrival, hook: undefined });
  }

  /** A step took the hook in: later steps may answer it (a held hook's decision, D13). */
  classified(hookId: string, hook: ClassifiedHook): void {
    const e = this.open.get(hookId);
    if (e) e.hook = hook;
    else this.open.set(hookId, { arrival: undefined, hook });
  }

  /** The classified hook a step answers, while no step answered it yet. */
  hook(hookId: string): ClassifiedHook | undefined {
    return this.open.get(hookId)?.hook;
  }

  /** The waiting arrival, left in place (a hold arms its timer on it). */
  arrival(hookId: string): HookArrival | undefined {
    return this.open.get(hookId)?.arrival;
  }

  /** A step answered the hook (or was undone): no step answers it again. */
  answered(hookId: string): void {
    const e = this.open.get(hookId);
    if (!e) return;
    e.hook = undefined;
    if (e.arrival === undefined) this.open.delete(hookId);
  }

  /** The arrival, to write its reply: nobody writes to it after this. */
  take(hookId: string): HookArrival | undefined {
    const e = this.open.get(hookId);
    if (!e) return undefined;
    const arrival = e.arrival;
    e.arrival = undefined;
    if (e.hook === undefined) this.open.delete(hookId);
    return arrival;
  }
}
