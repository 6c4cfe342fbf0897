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
