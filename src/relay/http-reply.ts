// How the relay answers an HTTP request: JSON, with the CORS headers decided for that request
// (D21). A leaf, so the HTTP routes and the SSE stream share it.
import type { ServerResponse } from 'node:http';

/** The CORS headers of a response, set per request once its origin was checked (D21). */
export const CORS = Symbol('cors');
export type Res = ServerResponse & { [CORS]?: Record<string, string> };

export function json(res: Res, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...res[CORS],
  });
  res.end(text);
}
