// The last step of every e2e suite: `aep-steer audit` of the adapter's log finds no violation of
// the steering rules (what the suite's steps did left a lifecycle the audit accepts), with the
// audit's own report as the failure message.
import * as assert from 'uvu/assert';
import { auditFiles, type AuditResult } from '../../src/audit/audit.js';
import { renderText } from '../../src/audit/report.js';
import { runCli } from './services-rig.js';

/** The audit of these logs, in-process; fails with its report on any violation. */
export async function auditClean(...logs: string[]): Promise<AuditResult> {
  const r = await auditFiles(logs);
  assert.equal(r.violations, [], renderText(r));
  return r;
}

/** `aep-steer audit LOG` as a person runs it (bin/aep-steer.js): exit 0, no violation. */
export async function auditCommandClean(env: NodeJS.ProcessEnv, ...logs: string[]): Promise<string> {
  const r = await runCli(['audit', ...logs], { env });
  assert.is(r.status, 0, `aep-steer audit ${logs.join(' ')} exited ${r.status}:\n${r.stdout}${r.stderr}`);
  return r.stdout;
}
