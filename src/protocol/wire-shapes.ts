// The shapes of what a vendor sends (hook bodies, lane messages), recorded for the drift check
// (`npm run drift`): with AEP_WIRE_SHAPES=FILE set, each distinct shape is appended to FILE once
// per process as `{src, kind, keys}`. A shape is key paths and value types only, never a value,
// so the file holds no instruction text, prompt or secret. Unset, the cost is one comparison.
import { appendFileSync } from 'node:fs';

const MAX_DEPTH = 4;
const seen = new Set<string>();

function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

function walk(v: unknown, path: string, depth: number, out: Set<string>): void {
  out.add(`${path}:${typeOf(v)}`);
  if (depth >= MAX_DEPTH || v === null || typeof v !== 'object') return;
  if (Array.isArray(v)) {
    for (const item of v.slice(0, 3)) walk(item, `${path}[]`, depth + 1, out);
    return;
  }
  for (const [k, child] of Object.entries(v)) walk(child, path === '' ? k : `${path}.${k}`, depth + 1, out);
}

/** Key paths with their types, sorted: `tool_input.command:string`. */
export function shapeOf(value: unknown): string[] {
  const out = new Set<string>();
  walk(value, '', 0, out);
  out.delete(':object');
  return [...out].sort();
}

/**
 * Records the shape of one message from `src` (a vendor's hooks or a lane), named by `kind` (the
 * hook's event name, the method, the message type). Never throws: a drift record must not cost
 * the agent anything.
 */
export function recordShape(src: string, kind: unknown, value: unknown): void {
  const file = process.env.AEP_WIRE_SHAPES;
  if (!file) return;
  try {
    const keys = shapeOf(value);
    const name = typeof kind === 'string' ? kind : '?';
    const line = JSON.stringify({ src, kind: name, keys });
    if (seen.has(line)) return;
    seen.add(line);
    appendFileSync(file, `${line}\n`, { mode: 0o600 });
  } catch {
    // best effort only
  }
}
