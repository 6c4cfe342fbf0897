// The better-sqlite3 binding behind the store's SQL-only seam (src/relay/sqlite.ts), for the
// bench's comparison only: better-sqlite3 is no dependency (it needs a native build), so it is
// loaded from the directory AEP_BENCH_BETTER_SQLITE3_DIR names, one `better-sqlite3` resolves in
// (e.g. `npm install --prefix DIR better-sqlite3@12.6.2`).
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { OpenDatabase, SqlDatabase } from '../../src/relay/sqlite.js';

export const betterSqlite3Dir = (): string | undefined => process.env.AEP_BENCH_BETTER_SQLITE3_DIR || undefined;

export const openDatabase: OpenDatabase = (path) => {
  const dir = betterSqlite3Dir();
  if (dir === undefined) throw new Error('AEP_BENCH_BETTER_SQLITE3_DIR names no directory holding better-sqlite3');
  const Database = createRequire(join(dir, 'noop.js'))('better-sqlite3') as new (path: string) => SqlDatabase;
  return new Database(path);
};

/**
 * Why the binding cannot serve this Node line, or undefined when it loads: a native build serves
 * the Node ABI it was built for only, so a build made for one line fails to load on another.
 */
export function betterSqlite3Unusable(): string | undefined {
  try {
    const db = openDatabase(':memory:');
    db.close();
    return undefined;
  } catch (err) {
    const first = ((err as Error).message ?? String(err)).replace(/\s+/g, ' ').slice(0, 240);
    return (
      `absent: better-sqlite3 in ${betterSqlite3Dir()} does not load on Node ${process.version} (${first}); ` +
      "build it with this line's headers (docs/benchmarks.md)"
    );
  }
}
