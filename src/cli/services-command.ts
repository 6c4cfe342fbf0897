// `aep-steer up [vendors…]`, `status`, `down`: the relay and adapters as background services, so
// the terminal an agent's TUI runs in never gets their output. `up` starts each one detached with
// its output in `$AEP_STATE_DIR/logs/<name>.log`, waits until it serves, and writes nothing after
// it returns; `status` says what runs; `down` stops exactly what `up` started (records in run/).
import type { Command } from 'commander';
import { DEFAULT_RELAY } from '../consumer/connect.js';
import { SteeringError } from '../protocol/errors.js';
import { loadTable, vendorTokens } from '../adapters/vendors.js';
import { portFree, portTakenMessage } from '../services/port-holder.js';
import {
  isRunning,
  lastError,
  listRecords,
  logSince,
  logSize,
  logTail,
  readRecord,
  removeRecord,
  serviceLog,
  type ServiceRecord,
} from '../services/records.js';
import { getJson, startService, stopService, waitReady } from '../services/supervise.js';

/** `up`'s exit when a port is taken (as `demo`'s). */
export const PORT_TAKEN_EXIT = 3;
const DEFAULT_RELAY_PORT = Number(new URL(DEFAULT_RELAY).port);
const DEFAULT_READY_MS = 20_000;
/** `up` serves this machine only; a relay others reach is `aep-steer relay --host` run by hand. */
const HOST = '127.0.0.1';

interface UpFlags {
  relayPort?: string;
  hookPort: string[];
  instruct?: boolean;
  timeoutMs: string;
}

interface Planned {
  name: string;
  port: number;
  args: string[];
  /** What to say when its port is taken: which port, and the flag that moves it. */
  what: string;
  flag: string;
  ready: () => Promise<boolean>;
}

const adapterName = (vendor: string): string => `adapter-${vendor}`;
const invalid = (message: string): SteeringError => new SteeringError('CONFIG_INVALID', message);

function portNumber(flag: string, v: string, min = 1): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > 65535) throw invalid(`${flag} must be a port ${min}-65535, got "${v}"`);
  return n;
}

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

type Plan = { relay: Planned; adapters: Planned[] };

async function plan(vendors: string[], f: UpFlags, env: NodeJS.ProcessEnv): Promise<Plan> {
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
      ],
      what: `${v} hook port`,
      flag: `--hook-port ${v}=<port>`,
      ready: adapterLinked(port),
    });
  }
  const ports = [relay, ...adapters].map((p) => p.port);
  const twice = ports.find((p, i) => ports.indexOf(p) !== i);
  if (twice !== undefined)
    throw invalid(`port ${twice} is given to two services; move one with --relay-port or --hook-port <vendor>=<port>`);
  return { relay, adapters };
}

const say = (line: string) => process.stdout.write(`${line}\n`);
const warn = (line: string) => process.stderr.write(`${line}\n`);

async function up(vendors: string[], f: UpFlags, env: NodeJS.ProcessEnv): Promise<number> {
  const timeoutMs = Number(f.timeoutMs);
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1)
    throw invalid(`--timeout-ms must be a whole number >= 1, got "${f.timeoutMs}"`);
  const { relay, adapters } = await plan(vendors, f, env);
  const all = [relay, ...adapters];
  const already = new Map<string, ServiceRecord>();
  for (const p of all) {
    const r = readRecord(p.name, env);
    if (r !== undefined && isRunning(r)) already.set(p.name, r);
  }
  const runningRelay = already.get('relay');
  if (runningRelay !== undefined && runningRelay.port !== relay.port) {
    const { port, pid } = runningRelay;
    warn(
      `up: the relay already runs on port ${port} (pid ${pid}); run aep-steer down first to move it to ${relay.port}`,
    );
    return 1;
  }
  // Every port is checked before anything starts: a taken one leaves nothing half started.
  const toStart = all.filter((p) => !already.has(p.name));
  const taken: string[] = [];
  for (const p of toStart)
    if (!(await portFree(p.port, HOST))) taken.push(portTakenMessage(p.what, p.port, HOST, p.flag));
  if (taken.length > 0) {
    for (const t of taken) warn(`up: ${t}`);
    warn('up: nothing was started');
    return PORT_TAKEN_EXIT;
  }
  for (const [name, r] of already) say(`${name}: already runs (pid ${r.pid}, port ${r.port}, log ${r.log})`);
  const started: ServiceRecord[] = [];
  const stopStarted = async () => {
    for (const s of [...started].reverse()) {
      await stopService(s);
      removeRecord(s.name, env);
    }
  };
  // Interrupted while waiting: what this call started goes too.
  const interrupted = () => {
    warn('up: interrupted; stopping what this run started');
    stopStarted().then(
      () => process.exit(130),
      () => process.exit(130),
    );
  };
  process.once('SIGINT', interrupted);
  process.once('SIGTERM', interrupted);
  try {
    return await startAll(toStart, started, timeoutMs, stopStarted, env);
  } finally {
    process.off('SIGINT', interrupted);
    process.off('SIGTERM', interrupted);
  }
}

async function startAll(
  toStart: Planned[],
  started: ServiceRecord[],
  timeoutMs: number,
  stopStarted: () => Promise<void>,
  env: NodeJS.ProcessEnv,
): Promise<number> {
  const failed = async (p: Planned, r: ServiceRecord): Promise<number> => {
    const tail = logTail(r.log);
    const exited = isRunning(r) ? '' : ' (it exited)';
    warn(`up: ${p.name} did not become ready within ${timeoutMs} ms${exited}; its log ${r.log} ends:`);
    for (const l of tail) warn(`  ${l}`);
    // Leave nothing of this call behind: what was running before stays, what it started stops.
    await stopStarted();
    const names = started.map((s) => s.name).join(', ');
    warn(started.length > 0 ? `up: stopped what this run started (${names})` : 'up: nothing was left running');
    return tail.some((l) => l.includes('PORT_IN_USE')) ? PORT_TAKEN_EXIT : 1;
  };
  // The relay first: adapters connect to it, and are ready once their link is up.
  const order = [toStart.filter((p) => p.name === 'relay'), toStart.filter((p) => p.name !== 'relay')];
  for (const group of order) {
    const launched = group.map((p) => {
      const from = logSize(serviceLog(p.name, env));
      return { p, from, r: startService(p.name, p.args, p.port, env) };
    });
    started.push(...launched.map((l) => l.r));
    const ready = await Promise.all(
      launched.map(async (l) => ({ ...l, ok: await waitReady(l.r, l.p.ready, timeoutMs) })),
    );
    const bad = ready.find((l) => !l.ok);
    if (bad !== undefined) return failed(bad.p, bad.r);
    for (const l of ready) {
      say(`${l.p.name}: started (pid ${l.r.pid}, port ${l.p.port}, log ${l.r.log})`);
      // What it said while starting (the local token created, where it listens), once, here.
      for (const line of logSince(l.r.log, l.from)) say(`  ${line}`);
    }
  }
  say('aep-steer status shows them; aep-steer down stops them');
  return 0;
}

interface Row {
  name: string;
  pid: number;
  port: number;
  running: boolean;
  relayLink: string;
  uptimeS: number;
  log: string;
  lastError?: string;
}

function uptime(s: number): string {
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${s % 60}s`;
  return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
}

async function rowOf(r: ServiceRecord): Promise<Row> {
  const running = isRunning(r);
  let link = '-';
  if (running) {
    const h = await getJson(r.port, '/healthz');
    if (h === undefined) link = 'not answering';
    else if (r.name === 'relay') link = 'serving';
    else link = typeof h['relay'] === 'string' ? h['relay'] : 'unknown';
  }
  const row: Row = {
    name: r.name,
    pid: r.pid,
    port: r.port,
    running,
    relayLink: link,
    uptimeS: running ? Math.max(0, Math.round((Date.now() - Date.parse(r.startedAt)) / 1000)) : 0,
    log: r.log,
  };
  const err = lastError(r.log);
  if (err !== undefined) row.lastError = err;
  return row;
}

async function status(json: boolean | undefined, env: NodeJS.ProcessEnv): Promise<number> {
  const rows = await Promise.all(listRecords(env).map(rowOf));
  if (json) say(JSON.stringify(rows));
  else if (rows.length === 0)
    say('nothing started by aep-steer up runs (aep-steer up [vendors…] starts the relay and adapters)');
  else {
    const table = [
      ['service', 'pid', 'port', 'state', 'relay link', 'uptime', 'last error'],
      ...rows.map((r) => [
        r.name,
        String(r.pid),
        String(r.port),
        r.running ? 'running' : 'not running',
        r.relayLink,
        r.running ? uptime(r.uptimeS) : '-',
        r.lastError ?? '-',
      ]),
    ];
    const widths = table[0]!.map((_, i) => Math.max(...table.map((t) => t[i]!.length)));
    for (const t of table)
      say(
        t
          .map((c, i) => (i === t.length - 1 ? c : c.padEnd(widths[i]!)))
          .join('  ')
          .trimEnd(),
      );
    for (const r of rows.filter((x) => !x.running)) {
      say(`${r.name} is not running: its log is ${r.log}; aep-steer up starts it again`);
    }
  }
  return rows.every((r) => r.running) ? 0 : 1;
}

async function down(names: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const wanted = new Set(names.map((n) => (n === 'relay' ? n : adapterName(n))));
  // Adapters before the relay, so they end with their last events sent.
  const records = listRecords(env)
    .filter((r) => wanted.size === 0 || wanted.has(r.name))
    .reverse();
  if (records.length === 0) say('nothing started by aep-steer up to stop');
  for (const r of records) {
    const outcome = await stopService(r);
    removeRecord(r.name, env);
    if (outcome === 'gone') say(`${r.name}: was not running (pid ${r.pid} has ended); removed its record`);
    else say(`${r.name}: stopped (pid ${r.pid}${outcome === 'killed' ? ', killed after it ignored SIGTERM' : ''})`);
  }
  return 0;
}

const collect = (v: string, prev: string[] = []): string[] => [...prev, v];

export function registerServices(program: Command, env: NodeJS.ProcessEnv = process.env): void {
  program
    .command('up')
    .description("start the relay and the named vendors' adapters in the background, output in AEP_STATE_DIR/logs/")
    .argument('[vendors...]', `vendor tokens (${vendorTokens().join(', ')})`)
    .option('--relay-port <n>', `the relay's port on 127.0.0.1 (AEP_PORT; default ${DEFAULT_RELAY_PORT})`)
    .option(
      '--hook-port <[vendor=]n>',
      "an adapter's hook port, repeatable (default: the vendor's, D15; one vendor: AEP_HOOK_PORT)",
      collect,
      [],
    )
    .option('--instruct', 'the adapters accept x.<vendor>.control.instruct (AEP_INSTRUCT=1, D5)')
    .option('--timeout-ms <ms>', 'how long each service may take to become ready', String(DEFAULT_READY_MS))
    .addHelpText(
      'after',
      '\nExit codes: 0 every service ready, 1 one did not become ready (nothing this run started is left),' +
        ' 2 usage, 3 a port is taken (nothing started).',
    )
    .action(async (vendors: string[], f: UpFlags) => {
      process.exitCode = await up(vendors, f, env);
    });
  program
    .command('status')
    .description('what aep-steer up started: pid, port, relay link, uptime, last error')
    .option('--json', 'one JSON array')
    .addHelpText('after', '\nExit codes: 0 everything up started runs, 1 something it started is not running, 2 usage.')
    .action(async (f: { json?: boolean }) => {
      process.exitCode = await status(f.json, env);
    });
  program
    .command('down')
    .description('stop what aep-steer up started (all, or the vendors named and "relay")')
    .argument('[services...]', 'vendor tokens, or "relay" (default: everything up started)')
    .action(async (names: string[]) => {
      process.exitCode = await down(names, env);
    });
}
