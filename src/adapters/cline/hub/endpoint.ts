// Where the Cline hub is (cline-hub-observed §1.6): `AEP_CLINE_HUB_URL` plus `AEP_CLINE_HUB_TOKEN`,
// else the hub's own discovery record (`AEP_CLINE_HUB_DISCOVERY`, default
// `$CLINE_DATA_DIR/locks/hub/production.json`). The record is read afresh on every connect: a
// restarted hub has a new token and the record vanishes while no hub runs.
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export interface HubEndpoint {
  url: string;
  token: string;
  /** The hub's pid from its discovery record, when it came from one. */
  pid?: number;
}

export function discoveryPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.AEP_CLINE_HUB_DISCOVERY) return env.AEP_CLINE_HUB_DISCOVERY;
  const data = env.CLINE_DATA_DIR || join(env.CLINE_DIR || join(env.HOME || homedir(), '.cline'), 'data');
  return join(data, 'locks', 'hub', 'production.json');
}

/** The endpoint, or why there is none right now (a message that says what to do). */
export function resolveHubEndpoint(env: NodeJS.ProcessEnv = process.env): HubEndpoint | { missing: string } {
  if (env.AEP_CLINE_HUB_URL) {
    if (!env.AEP_CLINE_HUB_TOKEN)
      return { missing: "AEP_CLINE_HUB_URL is set without AEP_CLINE_HUB_TOKEN (the hub's authToken)" };
    return { url: env.AEP_CLINE_HUB_URL, token: env.AEP_CLINE_HUB_TOKEN };
  }
  const path = discoveryPath(env);
  if (!existsSync(path))
    return {
      missing: `no Cline hub discovery record at ${path}; start one with \`cline hub ensure\` or set AEP_CLINE_HUB_URL and AEP_CLINE_HUB_TOKEN`,
    };
  try {
    const rec = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
    if (typeof rec.url !== 'string' || typeof rec.authToken !== 'string')
      return { missing: `${path} lacks url or authToken` };
    return { url: rec.url, token: rec.authToken, ...(typeof rec.pid === 'number' ? { pid: rec.pid } : {}) };
  } catch {
    return { missing: `${path} is not readable JSON` };
  }
}
