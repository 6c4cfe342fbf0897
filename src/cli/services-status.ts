// `aep-steer status`: what `up` started, one row each (pid, port, relay link, uptime, last error).
import { OPENCODE_DAEMON, opencodeAnswers } from '../adapters/opencode/daemon.js';
import { readTokenFile } from '../protocol/secret.js';
import { isRunning, lastError, listRecords, type ServiceRecord } from '../services/records.js';
import { getJson } from '../services/supervise.js';
import { serveAnswers } from '../adapters/qwen-code/serve/daemon.js';
import { say } from './services-base.js';

/** One service in `status --json`. */
export interface StatusRow {
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

async function rowOf(r: ServiceRecord): Promise<StatusRow> {
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
    const answers = r.name === OPENCODE_DAEMON ? opencodeAnswers : serveAnswers;
    link = token !== undefined && (await answers(r.url, token)) ? 'serving' : 'not answering';
  } else if (running) {
    const h = await getJson(r.port, '/healthz');
    if (h === undefined) link = 'not answering';
    else if (r.name === 'relay') link = 'serving';
    else link = typeof h['relay'] === 'string' ? h['relay'] : 'unknown';
  }
  const row: StatusRow = {
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

export async function status(json: boolean | undefined, env: NodeJS.ProcessEnv): Promise<number> {
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
