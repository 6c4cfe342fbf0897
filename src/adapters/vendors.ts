// The only list of vendors: AEP agent token → the module that holds its table. A new vendor is
// one line here. Each table is loaded on demand, so a command that serves one vendor (the
// `aep-steer hook` fallback, on every hook) loads that vendor's table and nothing else.
import type { VendorTable } from './table.js';

const VENDORS: readonly (readonly [string, () => Promise<VendorTable>])[] = [
  ['claude-code', async () => (await import('./claude-code.js')).claudeCode],
  ['codex', async () => (await import('./codex.js')).codex],
  ['qwen-code', async () => (await import('./qwen-code.js')).qwenCode],
  ['vscode', async () => (await import('./vscode.js')).vscode],
  ['hermes', async () => (await import('./hermes.js')).hermes],
  ['openhands', async () => (await import('./openhands.js')).openhands],
  ['cline', async () => (await import('./cline.js')).cline],
];

const loaders = new Map(VENDORS);

export const vendorTokens = (): string[] => [...loaders.keys()];

/** The vendor's table, loading only its own module; undefined for an unknown token. */
export function loadTable(token: string): Promise<VendorTable | undefined> {
  return loaders.get(token)?.() ?? Promise.resolve(undefined);
}
