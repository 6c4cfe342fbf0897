// The only list of vendors: AEP agent token → the module that holds its table, and the other names
// a person types for it (its CLI binary's, when that differs). A new vendor is one line here. Each
// table is loaded on demand, so a command that serves one vendor (the `aep-steer hook` fallback,
// on every hook) loads that vendor's table and nothing else.
import type { VendorTable } from './table.js';

const VENDORS: readonly (readonly [string, readonly string[], () => Promise<VendorTable>])[] = [
  ['claude-code', ['claude'], async () => (await import('./claude-code/table.js')).claudeCode],
  ['codex', [], async () => (await import('./codex/table.js')).codex],
  ['qwen-code', ['qwen'], async () => (await import('./qwen-code/table.js')).qwenCode],
  ['vscode', [], async () => (await import('./vscode/table.js')).vscode],
  ['hermes', [], async () => (await import('./hermes/table.js')).hermes],
  ['openhands', [], async () => (await import('./openhands/table.js')).openhands],
  ['cline', [], async () => (await import('./cline/table.js')).cline],
  ['copilot', [], async () => (await import('./copilot/table.js')).copilot],

  ['opencode', [], async () => (await import('./opencode/table.js')).opencode],
];

const loaders = new Map(VENDORS.map(([token, , load]) => [token, load]));
/** Every name a vendor answers to (its token and its aliases) → its token. */
const names = new Map(VENDORS.flatMap(([token, aliases]) => [token, ...aliases].map((n) => [n, token] as const)));

export const vendorTokens = (): string[] => [...loaders.keys()];

/** The other names a vendor answers to, alias → token (`claude` → `claude-code`). */
export const vendorAliases = (): ReadonlyMap<string, string> =>
  new Map([...names].filter(([name, token]) => name !== token));

/** The vendor token a name stands for (the token itself or an alias); undefined for an unknown name. */
export const vendorToken = (name: string): string | undefined => names.get(name);

/** The vendor's table, loading only its own module; undefined for an unknown token or alias. */
export function loadTable(name: string): Promise<VendorTable | undefined> {
  const token = names.get(name);
  return (token === undefined ? undefined : loaders.get(token)?.()) ?? Promise.resolve(undefined);
}
