// `--import` for the bench and its children: the checkouts `AEP_BENCH_BUILT_ROOTS` names
// (colon-separated) load their `src/` modules from their build (built-hooks.mjs). In-thread
// hooks (`module.registerHooks`, as tsx uses them where Node has them) where the line has
// them, since Node 26 deprecates `module.register`; the loader-thread form otherwise.
import module from 'node:module';
import { builtOf } from './built-hooks.mjs';

const roots = (process.env.AEP_BENCH_BUILT_ROOTS ?? '').split(':').filter(Boolean);
if (typeof module.registerHooks === 'function')
  module.registerHooks({ resolve: (specifier, context, next) => builtOf(roots, next(specifier, context)) });
else module.register('./built-hooks.mjs', import.meta.url, { data: { roots } });
