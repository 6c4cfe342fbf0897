// The e2e suite around a real `qwen serve` daemon the adapter follows (`--serve URL
// --serve-token-file F`), started in the suite's home, and the slow turn its tests steer into.
// The audit of the adapter's log is the suite's `e2e.auditClean()`.
import { e2eSuite } from './e2e-stack.js';
import { startQwenServe, type ServeDaemon } from './qwen-serve.js';
import { serveTurns } from './serve-turns.js';

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
  const { all, slowTurn } = serveTurns({
    root: () => e2e.home.root,
    stack: () => e2e.stack,
    session: sessionOf,
    prompt: (session, text) => serve().prompt(session, text),
  });
  return { e2e, serve, all, slowTurn };
}
