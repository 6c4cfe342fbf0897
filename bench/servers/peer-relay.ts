// The AEP reference relay (`server.cjs` + `aep.cjs`), when AEP_PEER_RELAY_DIR holds them. They
// are not part of this repository; `peerRelayHint` says where they come from.
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { projectDir, start, type Child } from '../lib/proc.js';

export const peerRelayDir = (): string | undefined => {
  const dir = process.env.AEP_PEER_RELAY_DIR;
  return dir && existsSync(join(dir, 'server.cjs')) && existsSync(join(dir, 'aep.cjs')) ? dir : undefined;
};

export const peerRelayHint =
  'relay figures use a bare ws broadcast as baseline; to compare with the AEP reference relay, put ' +
  'server.cjs and aep.cjs from github.com/agenteventprotocol/typescript-sdk test/fixtures/relay ' +
  '(a vendored copy of the reference relay) in a directory outside this repository and set AEP_PEER_RELAY_DIR to it';

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });

/** Starts the reference relay on a free loopback port; `ws` resolves from this project's node_modules. */
export async function startPeerRelay(dir: string, token: string): Promise<Child> {
  const port = await freePort();
  const child = await start(
    process.execPath,
    [join(dir, 'server.cjs')],
    {
      AEP_PORT: String(port),
      AEP_HOST: '127.0.0.1',
      AEP_TOKEN: token,
      NODE_PATH: join(projectDir, 'node_modules'),
    },
    (line) =>
      line.includes('listening')
        ? { socketUrl: `ws://127.0.0.1:${port}/socket`, url: `http://127.0.0.1:${port}` }
        : undefined,
  );
  return child;
}
