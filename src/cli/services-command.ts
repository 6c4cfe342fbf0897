// `aep-steer up [vendors…]`, `status`, `down`: the relay and adapters as background services, so
// the terminal an agent's TUI runs in never gets their output. `up` starts each one detached with
// its output in `$AEP_STATE_DIR/logs/<name>.log`, waits until it serves, and writes nothing after
// it returns; `status` says what runs; `down` stops exactly what `up` started (records in run/).
// `up qwen-code --serve` also starts (or attaches to) a `qwen serve` daemon for the serve lane,
// with its token in a mode-600 file, started before the adapter and stopped after it. Before
// anything starts, `up` warns of a vendor whose CLI would lack its model credentials here.
import { join } from 'node:path';
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
import { getJson, startProcess, startService, stopService, waitReady } from '../services/supervise.js';
import { credentialGaps } from '../services/credentials.js';
import { stateDir } from '../protocol/state-dir.js';
import { readTokenFile } from '../protocol/secret.js';
import {
  ensureServeToken,
  QWEN_SERVE_PORT,
  qwenBinary,
  qwenServeCommand,
  serveAnswers,
  untrustedHooks,
} from '../adapters/qwen-code/serve/daemon.js';

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
  /** `--serve` (true: start or attach to a daemon on `--serve-port`) or `--serve URL` (attach to the person's). */
  serve?: string | boolean;
  servePort?: string;
  serveTokenFile?: string;
}

/** The vendor whose serve lane `--serve` starts a daemon for, and the daemon's service name. */
const SERVE_VENDOR = 'qwen-code';
const DAEMON = 'qwen-serve';

interface Planned {
  name: string;
  port: number;
  /** `aep-steer` arguments; or, for a vendor's daemon, its whole command line in `command`. */
  args: string[];
  command?: { argv: string[]; env: NodeJS.ProcessEnv; cwd: string; url: string; tokenFile: string };
  /** Started after the relay and before the adapters (a daemon an adapter's lane attaches to). */
  daemon?: boolean;
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

type Plan = {
  relay: Planned;
  adapters: Planned[];
  /** A daemon `up` would start, unless one is already there to attach to (`attach`, said before starting). */
  daemon?: Planned;
  /** `--serve URL`, or a daemon found answering on the port with the token: attached, not started. */
  attach?: { url: string; tokenFile?: string };
};

/** What `--serve` asks for: the daemon's URL and token file, and whether `up` starts it. */
async function servePlan(
  f: UpFlags,
  vendors: string[],
  env: NodeJS.ProcessEnv,
): Promise<{ daemon?: Planned; attach?: { url: string; tokenFile?: string } } | undefined> {
  if (f.serve === undefined || f.serve === false) {
    if (f.servePort !== undefined || f.serveTokenFile !== undefined)
      throw invalid(`--serve-port and --serve-token-file go with --serve: \`aep-steer up ${SERVE_VENDOR} --serve\``);
    return undefined;
  }
  if (!vendors.includes(SERVE_VENDOR))
    throw invalid(
      `--serve starts the \`qwen serve\` daemon of ${SERVE_VENDOR}'s serve lane: \`aep-steer up ${SERVE_VENDOR} --serve\``,
    );
  if (typeof f.serve === 'string') {
    // The person's own daemon: attached, never started or stopped by up.
    try {
      const u = new URL(f.serve);
      if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('not http(s)');
    } catch {
      throw invalid(`--serve URL must be the daemon's http(s) URL, e.g. http://127.0.0.1:4170, got "${f.serve}"`);
    }
    if (f.servePort !== undefined)
      throw invalid('--serve-port starts a daemon; with --serve URL, up attaches to that one');
    if (f.serveTokenFile !== undefined) readTokenFile(f.serveTokenFile);
    return { attach: { url: f.serve, ...(f.serveTokenFile === undefined ? {} : { tokenFile: f.serveTokenFile }) } };
  }
  const port = portNumber('--serve-port', f.servePort ?? String(QWEN_SERVE_PORT));
  const url = `http://${HOST}:${port}`;
  const tokenFile = f.serveTokenFile ?? join(stateDir(env), 'qwen-serve.token');
  const running = readRecord(DAEMON, env);
  if (running !== undefined && isRunning(running) && running.url !== undefined) {
    if (running.port !== port)
      throw invalid(
        `the qwen serve daemon up started runs on port ${running.port} (pid ${running.pid}); \`aep-steer down ${DAEMON}\` first to move it to ${port}`,
      );
    return {
      daemon: daemonPlanned(running.argv, env, port, url, running.tokenFile ?? tokenFile, running.cwd ?? process.cwd()),
    };
  }
  const { token } = ensureServeToken(tokenFile);
  // A daemon already answering there with this token (the person's, or one up lost the record of) is attached to.
  if (!(await portFree(port, HOST)) && (await serveAnswers(url, token))) return { attach: { url, tokenFile } };
  const bin = qwenBinary(env);
  if (bin === undefined)
    throw invalid(
      '--serve runs `qwen serve`, and no qwen binary is on PATH: install Qwen Code 0.24.4 ' +
        '(`npm install -g @qwen-code/qwen-code@0.24.4`) or set AEP_QWEN_BIN=/path/to/qwen',
    );
  const cmd = qwenServeCommand(bin, port, token, env);
  return { daemon: daemonPlanned(cmd.argv, cmd.env, port, url, tokenFile, process.cwd()) };
}

function daemonPlanned(
  argv: string[],
  env: NodeJS.ProcessEnv,
  port: number,
  url: string,
  tokenFile: string,
  cwd: string,
): Planned {
  return {
    name: DAEMON,
    port,
    args: [],
    command: { argv, env, cwd, url, tokenFile },
    daemon: true,
    what: 'qwen serve port',
    flag: '--serve-port (or --serve URL to attach to the daemon there)',
    ready: async () => serveAnswers(url, readTokenFile(tokenFile)),
  };
}

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
  const served = await servePlan(f, vendors, env);
  const lane = served?.daemon?.command ?? served?.attach;
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

/**
 * One warning per vendor whose CLI would lack its model credentials here. A daemon `up` starts
 * runs with this environment, so its lack is the daemon's; the other CLIs run where the person
 * starts them, which is usually this terminal.
 */
function credentialWarnings(vendors: string[], daemon: boolean, env: NodeJS.ProcessEnv): string[] {
  return [...new Set(vendors)].flatMap((v) =>
    credentialGaps(v, env, { cwd: process.cwd() }).map((g) =>
      v === SERVE_VENDOR && daemon
        ? `up: warning: the qwen serve daemon up starts here lacks ${g.missing}, so its sessions' prompts would fail; ${g.fix}, then \`aep-steer down ${DAEMON}\` and \`aep-steer up ${SERVE_VENDOR} --serve\` again`
        : `up: warning: ${v} started from this terminal would lack ${g.missing}; ${g.fix} in the terminal you start ${v === 'codex' ? 'codex (or `aep-steer run codex`)' : v === 'claude-code' ? 'claude' : v === SERVE_VENDOR ? 'qwen' : v} in`,
    ),
  );
}

const say = (line: string) => process.stdout.write(`${line}\n`);
const warn = (line: string) => process.stderr.write(`${line}\n`);

async function up(vendors: string[], f: UpFlags, env: NodeJS.ProcessEnv): Promise<number> {
  const timeoutMs = Number(f.timeoutMs);
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1)
    throw invalid(`--timeout-ms must be a whole number >= 1, got "${f.timeoutMs}"`);
  const { relay, adapters, daemon, attach } = await plan(vendors, f, env);
  const all = [relay, ...(daemon === undefined ? [] : [daemon]), ...adapters];
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
  // An adapter already running without the serve lane would not reach the daemon: said, nothing started.
  const laneless = adapters.find((p) => {
    const r = already.get(p.name);
    return r !== undefined && p.args.includes('--serve') && !r.argv.includes('--serve');
  });
  if (laneless !== undefined) {
    const r = already.get(laneless.name)!;
    warn(
      `up: ${laneless.name} already runs without the serve lane (pid ${r.pid}); \`aep-steer down ${SERVE_VENDOR}\` first, then \`aep-steer up ${SERVE_VENDOR} --serve\` again`,
    );
    return 1;
  }
  for (const w of credentialWarnings(vendors, daemon !== undefined && !already.has(DAEMON), env)) warn(w);
  const untrusted = daemon === undefined || already.has(DAEMON) ? undefined : untrustedHooks(env, daemon.command!.cwd);
  if (untrusted !== undefined) warn(`up: warning: ${untrusted}`);
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
  if (attach !== undefined)
    say(
      `${DAEMON}: attached to the daemon at ${attach.url}${attach.tokenFile === undefined ? '' : ` (token ${attach.tokenFile})`}; up did not start it and down leaves it running`,
    );
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
  // The relay first: adapters connect to it, and are ready once their link is up; a daemon an
  // adapter's lane attaches to comes before the adapters.
  const order = [
    toStart.filter((p) => p.name === 'relay'),
    toStart.filter((p) => p.daemon === true),
    toStart.filter((p) => p.name !== 'relay' && p.daemon !== true),
  ];
  for (const group of order) {
    const launched = group.map((p) => {
      const from = logSize(serviceLog(p.name, env));
      const c = p.command;
      const r =
        c === undefined
          ? startService(p.name, p.args, p.port, env)
          : startProcess(p.name, c.argv, p.port, c.env, {
              cwd: c.cwd,
              extra: { url: c.url, tokenFile: c.tokenFile },
              recordEnv: env,
            });
      return { p, from, r };
    });
    started.push(...launched.map((l) => l.r));
    const ready = await Promise.all(
      launched.map(async (l) => ({ ...l, ok: await waitReady(l.r, l.p.ready, timeoutMs) })),
    );
    const bad = ready.find((l) => !l.ok);
    if (bad !== undefined) return failed(bad.p, bad.r);
    for (const l of ready) {
      say(`${l.p.name}: started (pid ${l.r.pid}, port ${l.p.port}, log ${l.r.log})`);
      const c = l.p.command;
      // A daemon says a great deal; where it serves, its folder and its token file are what matter.
      if (c !== undefined) say(`  serving ${c.url} for ${c.cwd}; its token is in ${c.tokenFile} (mode 600)`);
      // What it said while starting (the local token created, where it listens), once, here.
      else for (const line of logSince(l.r.log, l.from)) say(`  ${line}`);
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
  if (running && r.url !== undefined) {
    // A vendor's daemon answers its own health route, behind its token.
    let token: string | undefined;
    try {
      token = r.tokenFile === undefined ? undefined : readTokenFile(r.tokenFile);
    } catch {
      token = undefined;
    }
    link = token !== undefined && (await serveAnswers(r.url, token)) ? 'serving' : 'not answering';
  } else if (running) {
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
  // A vendor's name stops its adapter and the daemon up started for it (`qwen-code`: `qwen-serve`).
  const wanted = new Set(
    names.flatMap((n) =>
      n === 'relay' || n === DAEMON ? [n] : n === SERVE_VENDOR ? [adapterName(n), DAEMON] : [adapterName(n)],
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
    .option(
      '--serve [url]',
      `qwen-code: start a \`qwen serve\` daemon in this folder for the serve lane (or attach to the one at URL), token in a mode-600 file`,
    )
    .option('--serve-port <n>', `the daemon's port on 127.0.0.1 (default ${QWEN_SERVE_PORT})`)
    .option(
      '--serve-token-file <path>',
      "the mode-600 file holding the daemon's token (default AEP_STATE_DIR/qwen-serve.token, created if missing)",
    )
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
    .argument('[services...]', 'vendor tokens, "relay" or "qwen-serve" (default: everything up started)')
    .action(async (names: string[]) => {
      process.exitCode = await down(names, env);
    });
}
