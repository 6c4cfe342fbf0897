// `aep-steer up`: warns of what would fail, checks every port, then starts what is not running yet
// in order (relay, daemon, adapters), each detached with its output in its log, and waits until it
// serves; one that does not leaves nothing this call started behind.
import { portFree, portTakenMessage } from '../services/port-holder.js';
import {
  isRunning,
  logSince,
  logSize,
  logTail,
  readRecord,
  removeRecord,
  serviceLog,
  type ServiceRecord,
} from '../services/records.js';
import { startProcess, startService, stopService, waitReady } from '../services/supervise.js';
import { untrustedHooks } from '../adapters/qwen-code/serve/daemon.js';
import {
  DAEMON,
  HOST,
  PORT_TAKEN_EXIT,
  SERVE_VENDOR,
  invalid,
  say,
  warn,
  type Planned,
  type UpFlags,
} from './services-base.js';
import { plan } from './services-plan.js';

/**
 * One warning per vendor whose CLI would lack its model credentials here. A daemon `up` starts
 * runs with this environment, so its lack is the daemon's; the other CLIs run where the person
 * starts them, which is usually this terminal.
 */
async function credentialWarnings(vendors: string[], daemon: boolean, env: NodeJS.ProcessEnv): Promise<string[]> {
  // The tables load only here: `status` and `down` share this module and load none of them.
  const { tableFor } = await import('../adapters/registry.js');
  const out: string[] = [];
  for (const v of new Set(vendors)) {
    const check = await tableFor(v)?.credentials?.();
    for (const g of check?.gaps(env, { cwd: process.cwd() }) ?? [])
      out.push(
        v === SERVE_VENDOR && daemon
          ? `up: warning: the qwen serve daemon up starts here lacks ${g.missing}, so its sessions' prompts would fail; ${g.fix}, then \`aep-steer down ${DAEMON}\` and \`aep-steer up ${SERVE_VENDOR} --serve\` again`
          : `up: warning: ${v} started from this terminal would lack ${g.missing}; ${g.fix} in the terminal you start ${check?.startedAs ?? v} in`,
      );
  }
  return out;
}

const vendorOf = (p: Planned): string => p.name.replace(/^adapter-/, '');

export async function up(vendors: string[], f: UpFlags, env: NodeJS.ProcessEnv): Promise<number> {
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
      `up: ${laneless.name} already runs without the serve lane (pid ${r.pid}); \`aep-steer down ${vendorOf(laneless)}\` first, then \`aep-steer up ${vendorOf(laneless)}${vendorOf(laneless) === SERVE_VENDOR ? ' --serve' : ''}\` again`,
    );
    return 1;
  }
  for (const w of await credentialWarnings(vendors, daemon !== undefined && !already.has(DAEMON), env)) warn(w);
  const untrusted =
    daemon?.name !== DAEMON || already.has(DAEMON) ? undefined : untrustedHooks(env, daemon.command!.cwd);
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
      `${attach.name ?? DAEMON}: attached to the ${attach.name === undefined ? 'daemon' : 'server'} at ${attach.url}${attach.tokenFile === undefined ? '' : ` (token ${attach.tokenFile})`}; up did not start it and down leaves it running`,
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
      if (c !== undefined)
        say(
          `  serving ${c.url} for ${c.cwd}; its ${l.p.name === DAEMON ? 'token' : 'password'} is in ${c.tokenFile} (mode 600)`,
        );
      // What it said while starting (the local token created, where it listens), once, here.
      else for (const line of logSince(l.r.log, l.from)) say(`  ${line}`);
    }
  }
  say('aep-steer status shows them; aep-steer down stops them');
  return 0;
}
