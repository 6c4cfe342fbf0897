// D45 `aep-steer sessions --tree`: the roster's rows in the order of who spawned whom. A worker is
// listed under the session that spawned it, indented; a worker spawned from outside any session
// (a script, a person) is a root that names its spawner. A parent not listed (ended and hidden,
// or on another relay) leaves its workers as roots that name it.
import type { SessionRow } from '../consumer/roster.js';

/** The rows depth first, each session's label showing its place in the tree and its spawner. */
export function treeRows(rows: readonly SessionRow[]): SessionRow[] {
  const shown = new Set(rows.map((r) => r.session));
  const parentOf = (r: SessionRow): string | undefined => {
    const p = r.spawnedBy?.parent;
    return p !== undefined && shown.has(p) && p !== r.session ? p : undefined;
  };
  const children = new Map<string, SessionRow[]>();
  for (const r of rows) {
    const p = parentOf(r);
    if (p !== undefined) children.set(p, [...(children.get(p) ?? []), r]);
  }
  const out: SessionRow[] = [];
  const seen = new Set<string>();
  const walk = (r: SessionRow, depth: number): void => {
    // A loop in what the adapters said (each naming the other) is cut where it closes.
    if (seen.has(r.session)) return;
    seen.add(r.session);
    const by = r.spawnedBy;
    const note =
      by === undefined || (depth > 0 && by.parent !== undefined)
        ? ''
        : ` (spawned by ${by.identity}${by.parent === undefined ? '' : ` in ${by.parent}`})`;
    const label = depth === 0 ? r.session : `${'  '.repeat(depth - 1)}└ ${r.session}`;
    out.push({ ...r, session: label + note });
    for (const c of children.get(r.session) ?? []) walk(c, depth + 1);
  };
  for (const r of rows) if (parentOf(r) === undefined) walk(r, 0);
  // Whatever a loop left unvisited is listed last, as roots.
  for (const r of rows) walk(r, 0);
  return out;
}
