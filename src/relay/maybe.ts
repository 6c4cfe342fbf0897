// A store answers now (SQLite) or later (JetStream); these keep one code path for both, without
// a promise, and the turn it costs, where the answer is already there.
import type { Maybe } from './session-store.js';

/** Runs `f` on a value now, or when its promise settles: one code path for both kinds of store. */
export function andThen<T, R>(v: Maybe<T>, f: (t: T) => Maybe<R>): Maybe<R> {
  return v instanceof Promise ? v.then(f) : f(v);
}

/** All values, now when every one is ready, else as one promise (order kept). */
export function all<T>(list: Maybe<T>[]): Maybe<T[]> {
  return list.some((v) => v instanceof Promise) ? Promise.all(list) : (list as T[]);
}
