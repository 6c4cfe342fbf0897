// What `up` would start: the relay, the named vendors' adapters and a serve lane's daemon, each on
// its port with the check that says it is ready; every conflict is refused before anything starts.
import { loadTable, vendorTokens } from '../adapters/vendors.js';
import { isRunning, readRecord } from '../services/records.js';
import { getJson } from '../services/supervise.js';
import {
  DEFAULT_RELAY_PORT,
  HOST,
  SERVE_VENDOR,
  adapterName,
  invalid,
  portNumber,
  type Planned,
  type UpFlags,
} from './services-base.js';
import { servePlan } from './services-serve.js';
import { OPENCODE, opencodePlan } from './services-opencode.js';

/** `--hook-port vendor=N` (repeatable), or a bare N when one vendor is named. */
function hookPorts(values: string[], vendors: string[]): Map<string, number> {
  const ports = new Map<string, number>();
  for (const v of values) {
    const eq = v.indexOf('=');
    const vendor = eq === -1 ? (vendors.length === 1 ? vendors[0]! : undefined) : v.slice(0, eq);
    if (vendor === undefined)
      throw invalid(`--hook-port ${v}: with several vendors say which, e.g. --hook-port ${vendors[0]}=18377`);
    if (!vendors.includes(vendor))
      throw invalid(`--hook-port ${v}: ${vendor} is not among the vendors named (${vendors.join(', ')})`);
    ports.set(vendor, portNumber('--hook-port', eq === -1 ? v : v.slice(eq + 1)));
  }
  return ports;
}

const relayServes = (port: number) => async () => (await getJson(port, '/healthz')) !== undefined;
/** An adapter is ready when its endpoint answers and its relay link is up. */
const adapterLinked = (port: number) => async () => {
  const h = await getJson(port, '/healthz');
  return h !== undefined && (h['relay'] === undefined || h['relay'] === 'connected');
};

export type Plan = {
  relay: Planned;
  adapters: Planned[];
  /** A daemon `up` would start, unless one is already there to attach to (`attach`, said before starting). */
  daemon?: Planned;
  /** `--serve URL`, or a daemon found answering on the port with the token: attached, not started. */
  attach?: { url: string; tokenFile?: string; name?: string };
};

export async function plan(vendors: string[], f: UpFlags, env: NodeJS.ProcessEnv): Promise<Plan> {
  const unknown = vendors.filter((v) => !vendorTokens().includes(v));
  if (unknown.length > 0) throw invalid(`unknown vendor "${unknown[0]}"; known: ${vendorTokens().join(', ')}`);
  if (new Set(vendors).size > 1 && env['AEP_LOG']) {
    throw invalid(
      'AEP_LOG names one event log and up was given several vendors: unset it (each adapter logs to AEP_STATE_DIR/logs/<vendor>.jsonl)',
    );
  }
  const running = readRecord('relay', env);
  const wanted = f.relayPort ?? (env['AEP_PORT'] || undefined);
  // A relay `up` started earlier keeps its port unless another is asked for.
  const relayPort =
    running !== undefined && isRunning(running) && wanted === undefined
      ? running.port
      : portNumber('--relay-port', wanted ?? String(DEFAULT_RELAY_PORT));
  const relay: Planned = {
    name: 'relay',
    port: relayPort,
    args: ['relay', '--host', HOST, '--port', String(relayPort)],
    what: 'relay port',
    flag: '--relay-port (AEP_PORT)',
    ready: relayServes(relayPort),
  };
  // opencode's first: it refuses --serve naming both vendors before qwen's would start anything.
  const oc = await opencodePlan(f, vendors, env);
  const qwen = await servePlan(f, vendors, env);
  const served = qwen ?? oc;
  const lane = qwen?.daemon?.command ?? qwen?.attach;
  const given = hookPorts(f.hookPort, vendors);
  const single = vendors.length === 1 ? env['AEP_HOOK_PORT'] || undefined : undefined;
  const adapters: Planned[] = [];
  for (const v of new Set(vendors)) {
    const port =
      given.get(v) ?? (single !== undefined ? portNumber('AEP_HOOK_PORT', single) : (await loadTable(v))!.port);
    adapters.push({
      name: adapterName(v),
      port,
      args: [
        'adapter',
        v,
        '--port',
        String(port),
        '--relay',
        `ws://${HOST}:${relayPort}/socket`,
        ...(f.instruct ? ['--instruct'] : []),
        ...(v === SERVE_VENDOR && lane !== undefined
          ? ['--serve', lane.url, ...(lane.tokenFile === undefined ? [] : ['--serve-token-file', lane.tokenFile])]
          : []),
        ...(v === OPENCODE && oc !== undefined
          ? ['--serve', oc.lane.url, ...(oc.lane.tokenFile ? ['--serve-password-file', oc.lane.tokenFile] : [])]
          : []),
      ],
      what: `${v} hook port`,
      flag: `--hook-port ${v}=<port>`,
      ready: adapterLinked(port),
    });
  }
  const ports = [relay, ...adapters, ...(served?.daemon === undefined ? [] : [served.daemon])].map((p) => p.port);
  const twice = ports.find((p, i) => ports.indexOf(p) !== i);
  if (twice !== undefined)
    throw invalid(
      `port ${twice} is given to two services; move one with --relay-port, --hook-port <vendor>=<port> or --serve-port`,
    );
  return {
    relay,
    adapters,
    ...(served?.daemon === undefined ? {} : { daemon: served.daemon }),
    ...(served?.attach === undefined ? {} : { attach: served.attach }),
  };
}
