// The model provider a hosted Copilot session is created with: the headless server takes it with
// each `session.create`, not from the environment (copilot-opencode-observed §1). From a provider
// file (`--provider-file`, AEP_COPILOT_PROVIDER_FILE: a mode-600 JSON `{provider, model}`), else
// from the BYOK variables the CLI itself reads.
import { readFileSync, statSync } from 'node:fs';
import { SteeringError } from '../../../protocol/errors.js';

export interface SessionProvider {
  provider: Record<string, unknown>;
  model: string;
}

function fromFile(path: string): SessionProvider {
  let mode: number;
  let text: string;
  try {
    mode = statSync(path).mode & 0o777;
    text = readFileSync(path, 'utf8');
  } catch (cause) {
    throw new SteeringError('CONFIG_INVALID', `cannot read the Copilot provider file ${path}; check the path`, {
      cause,
    });
  }
  if ((mode & 0o077) !== 0)
    throw new SteeringError(
      'CONFIG_INVALID',
      `the Copilot provider file ${path} is readable by others (mode ${mode.toString(8)}); it may hold a key: chmod 600 it`,
    );
  let v: { provider?: unknown; model?: unknown };
  try {
    v = JSON.parse(text) as typeof v;
  } catch (cause) {
    throw new SteeringError('CONFIG_INVALID', `${path} is not JSON; it holds {"provider": {...}, "model": "..."}`, {
      cause,
    });
  }
  const provider = v.provider;
  if (provider === null || typeof provider !== 'object' || typeof v.model !== 'string' || v.model === '')
    throw new SteeringError(
      'CONFIG_INVALID',
      `${path} must hold {"provider": {"type": "openai", "baseUrl": "...", "apiKey": "..."}, "model": "..."}`,
    );
  return { provider: provider as Record<string, unknown>, model: v.model };
}

/** The provider and model for `session.create`, or the error that says what to set. */
export function sessionProvider(env: NodeJS.ProcessEnv, file?: string): SessionProvider {
  const path = file ?? env.AEP_COPILOT_PROVIDER_FILE;
  if (path !== undefined && path !== '') return fromFile(path);
  const baseUrl = env.COPILOT_PROVIDER_BASE_URL;
  const model = env.COPILOT_MODEL;
  if (baseUrl === undefined || baseUrl === '' || model === undefined || model === '')
    throw new SteeringError(
      'CONFIG_INVALID',
      'no model provider for the Copilot session: export COPILOT_PROVIDER_BASE_URL and COPILOT_MODEL (BYOK, with COPILOT_PROVIDER_API_KEY), or give --provider-file',
    );
  const type = env.COPILOT_PROVIDER_TYPE || 'openai';
  const apiKey = env.COPILOT_PROVIDER_API_KEY;
  return {
    provider: { type, baseUrl, ...(apiKey === undefined || apiKey === '' ? {} : { apiKey }) },
    model,
  };
}
