// After the e2e suite: no vendor CLI the tests started may still run. The test runner marks the
// environment of every test file it starts (RUN_MARK=<id>); what the tests start inherits it,
// daemons that outlive their parent included (Codex 0.171.0's `app-server --managed-daemon`). A
// process that carries the mark and runs a vendor binary (claude, codex, qwen, cline) is a leak:
// it is named, ended (SIGTERM, then SIGKILL), and the run fails. Processes of other runs on the
// same machine carry another mark or none, and are left alone. Linux (/proc) only.
import { readdirSync, readFileSync } from 'node:fs';

export const RUN_MARK = 'AEP_TEST_RUN';
const VENDOR = /(^|\/)(claude|codex|qwen|cline)(\.js|\.mjs|\.cjs)?$|(^|\/)codex-linux-sandbox$/;

const read = (path) => {
  try {
    return readFileSync(path);
  } catch {
    return undefined;
  }
};

/** The processes (other than this one) whose environment carries `RUN_MARK=id` and that run a vendor binary. */
export function vendorLeftovers(id) {
  let names;
  try {
    names = readdirSync('/proc');
  } catch {
    return [];
  }
  const out = [];
  for (const n of names) {
    if (!/^\d+$/.test(n) || Number(n) === process.pid) continue;
    const env = read(`/proc/${n}/environ`);
    if (env === undefined || !env.toString().split('\0').includes(`${RUN_MARK}=${id}`)) continue;
    const stat = read(`/proc/${n}/stat`)?.toString() ?? '';
    if (/\) Z /.test(stat)) continue;
    const argv = (read(`/proc/${n}/cmdline`)?.toString() ?? '').split('\0').filter(Boolean);
    // A node launcher (`node …/bin/codex.js`) or the native binary itself.
    if (!argv.slice(0, 2).some((a) => VENDOR.test(a))) continue;
    out.push({ pid: Number(n), command: argv.join(' ') });
  }
  return out;
}

const alive = (pid) => {
  const stat = read(`/proc/${pid}/stat`)?.toString();
  return stat !== undefined && !/\) Z /.test(stat);
};

/** Ends the leftovers this run started: SIGTERM, then SIGKILL for any still there after `graceMs`. */
export async function endLeftovers(list, graceMs = 3000) {
  for (const p of list) {
    try {
      process.kill(p.pid, 'SIGTERM');
    } catch {
      // gone already
    }
  }
  const until = Date.now() + graceMs;
  while (list.some((p) => alive(p.pid)) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  for (const p of list.filter((x) => alive(x.pid))) {
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      // gone already
    }
  }
}
