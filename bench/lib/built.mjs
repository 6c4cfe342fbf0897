// `--import` for the bench and its children: the checkouts `AEP_BENCH_BUILT_ROOTS` names
// (colon-separated) load their `src/` modules from their build (built-hooks.mjs).
import { register } from 'node:module';

const roots = (process.env.AEP_BENCH_BUILT_ROOTS ?? '').split(':').filter(Boolean);
register('./built-hooks.mjs', import.meta.url, { data: { roots } });
