// D44: the calls one step of the session machine makes reach the lane in one turn of the event
// loop. Gathered per session until that turn is over, a queue handed over at a turn's end goes to
// the daemon as one prompt: sent one by one, the first would start a turn at once and each of the
// others would wait for a turn of its own.

/** Gathers items per key until the current turn of the event loop ends, then sends each key's together. */
export function gatherPerStep<T, R>(send: (items: T[]) => Promise<R>): (key: string, item: T) => Promise<R> {
  const open = new Map<string, { items: T[]; sent: Promise<R> }>();
  return (key, item) => {
    const found = open.get(key);
    if (found !== undefined) {
      found.items.push(item);
      return found.sent;
    }
    const items = [item];
    const sent = new Promise<void>((next) => setImmediate(next)).then(() => {
      open.delete(key);
      return send(items);
    });
    open.set(key, { items, sent });
    return sent;
  };
}
