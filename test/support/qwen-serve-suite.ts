// The e2e suite around a real `qwen serve` daemon the adapter follows (`--serve URL
// --serve-token-file F`), started in the suite's home, and the slow turn its tests steer into.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AepEvent } from '../../src/protocol/index.js';
import { e2eSuite } from './e2e-stack.js';
import { startQwenServe, type ServeDaemon } from './qwen-serve.js';

/** `sessionOf`: the daemon session the suite's tests steer (set once the daemon made it). */
export function qwenServeSuite(label: string, sessionOf: () => string) {
  let daemon: ServeDaemon | undefined;
  const e2e = e2eSuite('qwen-code', {
    label,
    async flags(home, e2e) {
      daemon = await startQwenServe(home, e2e.mock.baseUrl);
      const started = daemon;
      e2e.deferAfterAdapter(() => started.kill());
      return { serve: daemon.url, serveTokenFile: daemon.tokenFile };
    },
  });
  /** The suite's daemon (started before the adapter). */
  const serve = (): ServeDaemon => {
    if (daemon === undefined) throw new Error('the qwen serve daemon has not been started');
    return daemon;
  };
  const all = (type: string): AepEvent[] =>
    e2e.stack.events.filter((e) => e.session === sessionOf() && e.type === type);
  /** A prompt to the daemon whose shell call waits for a file; resolves once the hooks saw the tool start. */
  async function slowTurn(tag: string): Promise<{ release: () => void; finished: number }> {
    const gate = join(e2e.home.root, `${tag}.go`);
    const tools = all('tool.requested').length;
    const finished = all('run.finished').length;
    await serve().prompt(sessionOf(), `[[TURN]] [[WAITFILE:${gate}]] ${tag} run the slow command`);
    await e2e.stack.waitFor(`${tag}: the slow tool call`, () => all('tool.requested')[tools]);
    return { release: () => writeFileSync(gate, ''), finished };
  }
  return { e2e, serve, all, slowTurn };
}
