// `node --import ./test/support/trace-loads.mjs …`: appends every module URL the process resolves
// to the file named by AEP_TRACE_LOADS, one per line (test/cli/startup-loads.test.ts reads it).
import { register } from 'node:module';

const hooks = `
import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  if (process.env.AEP_TRACE_LOADS) appendFileSync(process.env.AEP_TRACE_LOADS, r.url + '\\n');
  return r;
}`;
register(`data:text/javascript,${encodeURIComponent(hooks)}`);
