// What a headless run (`aep-steer run claude`, `aep-steer run copilot`) and the lane it joins over a
// private Unix socket share: reading the caller's whole input, joining the socket, and the lane
// closing its socket server.
import { rmSync } from 'node:fs';
import { connect, type Server, type Socket } from 'node:net';

/** The whole of a stream as text (what a run reads its prompt from). */
export const readAll = (s: NodeJS.ReadableStream): Promise<string> =>
  new Promise((resolve) => {
    let text = '';
    s.on('data', (d: Buffer | string) => (text += d.toString()));
    s.on('end', () => resolve(text));
    s.on('error', () => resolve(text));
  });

/** The lane's socket, joined; or why not. */
export const joinLane = (path: string): Promise<Socket | string> =>
  new Promise((resolve) => {
    const s = connect(path);
    s.once('connect', () => resolve(s));
    s.once('error', (err) => resolve(err.message));
  });

/** Ends every joined run's socket, stops listening and removes the socket file. */
export async function closeLaneServer(
  server: Server | undefined,
  path: string,
  sockets: Iterable<{ socket: Socket }>,
): Promise<void> {
  for (const r of sockets) r.socket.destroy();
  await new Promise((r) => (server === undefined ? r(undefined) : server.close(() => r(undefined))));
  if (server !== undefined) rmSync(path, { force: true });
}
