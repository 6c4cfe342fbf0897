// Session positions `(epoch, seq)`: their type, their order, and sorted lists of them (the refused
// or failed positions a session's later events wait behind).

/** Where an event stands in its session (AEP-0001 §7): positions order within and across epochs. */
export interface Position {
  epoch: number;
  seq: number;
}

export const before = (a: Position, b: Position): boolean =>
  a.epoch < b.epoch || (a.epoch === b.epoch && a.seq < b.seq);
export const same = (a: Position, b: Position): boolean => a.epoch === b.epoch && a.seq === b.seq;

/**
 * Places a copy of `pos` in the sorted `list` unless it is there already; beyond `cap` entries the
 * earliest are kept (a resend starts at the earliest). Positions come mostly in order: the place is
 * sought from the end.
 */
export function placeSorted(list: Position[], pos: Position, cap: number): void {
  let i = list.length;
  while (i > 0 && before(pos, list[i - 1]!)) i -= 1;
  if (i > 0 && same(list[i - 1]!, pos)) return;
  if (i === list.length && list.length >= cap) return;
  list.splice(i, 0, { epoch: pos.epoch, seq: pos.seq });
  if (list.length > cap) list.pop();
}

/** The index of the first of the sorted `list` not before `pos` (`list.length` if none). */
export function firstFrom(list: readonly Position[], pos: Position): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (before(list[mid]!, pos)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Positioned rows in their order, with the seq-less ones placed among them by arrival. */
export function interleaveByArrival(
  positioned: readonly { arrival: number; raw: string }[],
  loose: readonly { arrival: number; raw: string }[],
): string[] {
  const items: string[] = [];
  let i = 0;
  for (const p of positioned) {
    while (i < loose.length && loose[i]!.arrival < p.arrival) items.push(loose[i++]!.raw);
    items.push(p.raw);
  }
  while (i < loose.length) items.push(loose[i++]!.raw);
  return items;
}
