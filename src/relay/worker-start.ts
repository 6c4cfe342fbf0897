// Starts one of the store's worker threads (the writer, the checkpointer) from its module beside
// this one: the built package runs the `.js` file; the TypeScript sources (tests, bench) give the
// thread their loader first.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker, type WorkerOptions } from 'node:worker_threads';

export function startWorker(name: string, options: WorkerOptions): Worker {
  const here = import.meta.url;
  if (!here.endsWith('.ts')) return new Worker(new URL(`./${name}.js`, here), options);
  const loader = pathToFileURL(
    join(dirname(createRequire(here).resolve('tsx/package.json')), 'dist', 'esm', 'api', 'index.mjs'),
  ).href;
  const entry = new URL(`./${name}.ts`, here).href;
  const boot = `import(${JSON.stringify(loader)}).then((m) => { m.register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(boot, { ...options, eval: true });
}

/** How often the checkpointer folds the WAL back into the database file. */
const CHECKPOINT_EVERY_MS = 250;

/**
 * A WAL checkpoint copies pages and fsyncs; SQLite's automatic one runs inside whichever commit
 * crosses 1,000 pages, stalling the event loop, and with it fan-out and command forwarding, for
 * milliseconds. Here commits never checkpoint; a worker thread with its own connection runs
 * PASSIVE checkpoints beside them (they never block the writer).
 */
export function startCheckpointer(path: string, engine: string | undefined): Worker {
  const w = startWorker('store-checkpointer', {
    workerData: { path, engine, everyMs: CHECKPOINT_EVERY_MS },
    execArgv: [],
  });
  // A checkpointer that cannot run leaves SQLite's data safe in the WAL; the next open folds it in.
  w.on('error', () => undefined);
  w.unref();
  return w;
}
