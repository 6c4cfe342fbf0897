// Every vendor table at hand, for the commands that serve or list any of them. The list itself
// is src/adapters/vendors.ts (loaded on demand there); this module loads all of it once.
import { loadTable, vendorToken, vendorTokens } from './vendors.js';
import type { SurfaceOptions, VendorTable } from './table.js';
import { surfaceFrom } from './surface-from.js';
import type { VendorSurface } from '../streams/surface.js';

const TABLES: readonly VendorTable[] = await Promise.all(vendorTokens().map(async (t) => (await loadTable(t))!));

export const vendorTables: ReadonlyMap<string, VendorTable> = new Map(TABLES.map((t) => [t.token, t]));

export { vendorAliases, vendorToken, vendorTokens } from './vendors.js';

/** The vendor's table, by its token or an alias (`claude`); undefined for an unknown name. */
export function tableFor(name: string): VendorTable | undefined {
  const token = vendorToken(name);
  return token === undefined ? undefined : vendorTables.get(token);
}

/** The vendor's surface; `opts` turns on its opt-in held gate (CONFIG_INVALID on a vendor without one). */
export function surfaceFor(token: string, opts: SurfaceOptions = {}): VendorSurface | undefined {
  const table = vendorTables.get(token);
  return table === undefined ? undefined : surfaceFrom(table, opts);
}
