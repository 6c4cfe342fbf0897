// Whether a vendor's CLI would find its model credentials in an environment: what every vendor's
// check shares. Each vendor reads them the way its pinned CLI looks for them, in its own folder
// (`<vendor>/credentials.ts`, vendor-clis-observed §1.2, §2.2, §3.2, §4.1), loaded only by the
// commands that warn (`up`, `run`). Nothing is sent anywhere or printed: only the names of what is
// missing.
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';

export interface CredentialGap {
  /** What the CLI will lack, named (`MOCK_API_KEY, which codex's model provider "mock" reads`). */
  missing: string;
  /** What the person does about it, where the CLI runs (the caller says where that is). */
  fix: string;
  /** True when the CLI fails for certain without it (an `env_key` unset), not only probably. */
  certain: boolean;
}

/** Where the CLI runs: its own arguments (a Codex `--profile`) and its directory (Qwen's .env files). */
interface CredentialContext {
  args?: readonly string[];
  cwd?: string;
}

/** A vendor's check: the gaps of an environment, and the command a person starts the CLI with. */
export interface CredentialCheck {
  gaps(env: NodeJS.ProcessEnv, o: CredentialContext): CredentialGap[];
  /** How the warning names where the CLI starts (`codex (or \`aep-steer run codex\`)`). */
  startedAs: string;
}

export const home = (env: NodeJS.ProcessEnv): string => env.HOME || homedir();
export const set = (env: NodeJS.ProcessEnv, name: string): boolean => (env[name] ?? '').trim() !== '';

export function readJson(path: string): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(readFileSync(path, 'utf8')) as unknown;
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
export const rec = (v: unknown): Record<string, unknown> | undefined =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
export function str(v: unknown): string | undefined {
  return typeof v === 'string' && v.trim() !== '' ? v : undefined;
}

/** `KEY=` in a dotenv file. */
export const dotenvHas = (file: string, key: string): boolean => {
  try {
    return new RegExp(`^\\s*(export\\s+)?${key}\\s*=\\s*\\S`, 'm').test(readFileSync(file, 'utf8'));
  } catch {
    return false;
  }
};
