// The only list of vendors: AEP agent token → its table. A new vendor is one line here.
import { claudeCode } from './claude-code.js';
import { codex } from './codex.js';
import { qwenCode } from './qwen-code.js';
import { vscode } from './vscode.js';
import { hermes } from './hermes.js';
import { cline } from './cline.js';
import { openhands } from './openhands.js';
import { surfaceFrom, type SurfaceOptions, type VendorTable } from './table.js';
import type { VendorSurface } from '../streams/surface.js';

const TABLES: readonly VendorTable[] = [
  claudeCode,
  codex,
  qwenCode,
  vscode,
  hermes,
  openhands,
  cline,
];

export const vendorTables: ReadonlyMap<string, VendorTable> = new Map(TABLES.map((t) => [t.token, t]));

export const vendorTokens = (): string[] => [...vendorTables.keys()];

export function tableFor(token: string): VendorTable | undefined {
  return vendorTables.get(token);
}

/** The vendor's surface; `opts` turns on its opt-in held gate (CONFIG_INVALID on a vendor without one). */
export function surfaceFor(token: string, opts: SurfaceOptions = {}): VendorSurface | undefined {
  const table = vendorTables.get(token);
  return table === undefined ? undefined : surfaceFrom(table, opts);
}
