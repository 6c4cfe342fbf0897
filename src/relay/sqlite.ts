// The SQLite binding under the relay's file store: Node's built-in `node:sqlite` (no native build,
// no dependency), or another module exposing the same few calls (the bench compares one).
// Node 22 prints "ExperimentalWarning: SQLite is an experimental feature" the first time a thread
// loads `node:sqlite` (24 and later do not); a relay user can do nothing about it, so exactly
// that warning is held back while the module loads, and every other warning passes.

/** A value bound to a statement's `?` placeholders. */
export type SqlValue = string | number | bigint | null;

export interface SqlStatement {
  run(...params: SqlValue[]): { changes: number | bigint; lastInsertRowid: number | bigint };
  get(...params: SqlValue[]): unknown;
  all(...params: SqlValue[]): unknown[];
}

/** What the store uses of a connection: no transaction helper and no pragma call, SQL only. */
export interface SqlDatabase {
  exec(sql: string): unknown;
  prepare(sql: string): SqlStatement;
  close(): unknown;
}

export type OpenDatabase = (path: string) => SqlDatabase;

const WARNING = 'SQLite is an experimental feature';

/** True for the one warning Node 22 emits on loading `node:sqlite`, in either form emitWarning takes. */
function isSqliteWarning(warning: string | Error, rest: unknown[]): boolean {
  const text = typeof warning === 'string' ? warning : warning.message;
  const opt = rest[0];
  const type =
    typeof warning !== 'string'
      ? warning.name
      : typeof opt === 'string'
        ? opt
        : (opt as { type?: string } | undefined)?.type;
  return type === 'ExperimentalWarning' && text.startsWith(WARNING);
}

/**
 * Runs `load` with the SQLite experimental warning held back; any other warning it emits goes out.
 * @public test/relay/sqlite-warning.test.ts imports it in a child process, where knip cannot see it.
 */
export function withoutSqliteWarning<T>(load: () => T): T {
  const emit = process.emitWarning;
  process.emitWarning = function (this: unknown, warning: string | Error, ...rest: unknown[]): void {
    if (!isSqliteWarning(warning, rest)) Reflect.apply(emit, this, [warning, ...rest]);
  } as typeof process.emitWarning;
  try {
    return load();
  } finally {
    process.emitWarning = emit;
  }
}

let builtin: typeof import('node:sqlite') | undefined;

/** `node:sqlite`, loaded on first use (a static import would load it before any filter could run). */
function nodeSqlite(): typeof import('node:sqlite') {
  builtin ??= withoutSqliteWarning(() => process.getBuiltinModule('node:sqlite'));
  return builtin;
}

export const openDatabase: OpenDatabase = (path) => new (nodeSqlite().DatabaseSync)(path) as SqlDatabase;

/** The opener a store thread uses: `node:sqlite`, or `openDatabase` of the module at `engine` (a URL). */
export async function engineOpener(engine: string | undefined): Promise<OpenDatabase> {
  if (engine === undefined) return openDatabase;
  return ((await import(engine)) as { openDatabase: OpenDatabase }).openDatabase;
}
