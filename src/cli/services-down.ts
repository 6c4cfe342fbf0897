// `aep-steer down`: stops what `up` started, adapters first, then the daemons, then the relay.
import { listRecords, removeRecord, type ServiceRecord } from '../services/records.js';
import { stopService } from '../services/supervise.js';
import { DAEMON, SERVE_VENDOR, adapterName, say } from './services-base.js';
import { OPENCODE_DAEMON } from '../adapters/opencode/daemon.js';

export async function down(names: string[], env: NodeJS.ProcessEnv): Promise<number> {
  // A vendor's name stops its adapter and the daemon up started for it (`qwen-code`: `qwen-serve`).
  const wanted = new Set(
    names.flatMap((n) =>
      n === 'relay' || n === DAEMON || n === OPENCODE_DAEMON
        ? [n]
        : n === SERVE_VENDOR
          ? [adapterName(n), DAEMON]
          : n === 'opencode'
            ? [adapterName(n), OPENCODE_DAEMON]
            : [adapterName(n)],
    ),
  );
  // Adapters first, so they end with their last events sent, then the daemons they attached to, then the relay.
  const rank = (r: ServiceRecord) => (r.name === 'relay' ? 2 : r.url !== undefined ? 1 : 0);
  const records = listRecords(env)
    .filter((r) => wanted.size === 0 || wanted.has(r.name))
    .sort((a, b) => rank(a) - rank(b));
  if (records.length === 0) say('nothing started by aep-steer up to stop');
  for (const r of records) {
    const outcome = await stopService(r);
    removeRecord(r.name, env);
    if (outcome === 'gone') say(`${r.name}: was not running (pid ${r.pid} has ended); removed its record`);
    else say(`${r.name}: stopped (pid ${r.pid}${outcome === 'killed' ? ', killed after it ignored SIGTERM' : ''})`);
  }
  return 0;
}
