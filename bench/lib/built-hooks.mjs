// Module resolve hook for the bench and its children (registered by built.mjs): a module of a
// checkout's `src/` (the roots built.mjs hands over) loads from that checkout's `dist/`, the tsc
// output the installed CLI runs, instead of tsx's transform of the source. tsx compiles with
// esbuild's `keepNames`, which wraps every function a hot path creates in a `__name` call the
// shipped build does not make (2% of the relay's thread on SSE fan-out). A missing or older
// `dist/` file is an error that says what to do: never a silent fallback to the source, nor a
// figure taken from a stale build.
import { existsSync, statSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** Where a resolved module loads from: its build when it is a root's source. */
export function builtOf(roots, resolved) {
  if (!resolved.url.startsWith('file:')) return resolved;
  const path = fileURLToPath(resolved.url);
  const root = roots.find((d) => path.startsWith(`${d}/src/`));
  if (root === undefined || !path.endsWith('.ts')) return resolved;
  const built = `${root}/dist/${path.slice(`${root}/src/`.length, -'.ts'.length)}.js`;
  if (!existsSync(built) || statSync(built).mtimeMs < statSync(path).mtimeMs)
    throw new Error(`bench: ${built} is missing or older than its source; run \`npm run build\` in ${root}`);
  return { ...resolved, url: pathToFileURL(built).href, format: 'module' };
}

// The asynchronous form, for `module.register` (a Node line without `module.registerHooks`):
// it runs on the loader's own thread, whose environment is a copy made before the bench set it.
let roots = [];
export function initialize(data) {
  roots = data.roots;
}
export async function resolve(specifier, context, next) {
  return builtOf(roots, await next(specifier, context));
}
