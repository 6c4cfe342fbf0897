// Reads the flags a vendor's adapter alone takes (its table's `options`, declared in its folder)
// into the adapter's settings, the same way for every vendor: the flag, else its variable (D16),
// else the row's default. `aep-steer adapter` registers every vendor's rows from here, so the
// command names no vendor's flag; a flag the chosen vendor lacks is refused, naming who takes it.
import { SteeringError } from '../protocol/errors.js';
import { readTokenFile } from '../protocol/secret.js';
import type { AttachedLaneSpec } from './lane-spec.js';
import {
  SWITCHES,
  type OptionTarget,
  type SourceSpec,
  type SurfaceOptions,
  type VendorOption,
  type VendorTable,
} from './table.js';
import { optionFor } from './surface-from.js';

/** What the command line gave, by commander's property name (`--hub-url` → `hubUrl`). */
export type GivenOptions = Readonly<Record<string, string | boolean | undefined>>;

/** What a vendor's options set, for the adapter to build its surface and open its ways in. */
export interface VendorSettings {
  /** The opt-in held gate and its tool pattern, for `surfaceFrom`. */
  gate: SurfaceOptions;
  /** The user-plane channel to open: whether its verbs are on, and the environment it reads. */
  userPlane?: { control: boolean; env: NodeJS.ProcessEnv };
  /** A bridge's server connection. */
  source?: { spec: SourceSpec; url: string; key?: string; pollMs: number; deltas: boolean };
  /** The daemon the attached native lane joins (D30). */
  lane?: { spec: AttachedLaneSpec; url: string; tokenFile?: string };
}

/** `--hub-url <url>` → `--hub-url`. */
export const flagName = (o: VendorOption): string => o.flag.split(' ')[0]!;

/** commander's property for the flag: `--hub-url <url>` → `hubUrl`. */
export const optionKey = (o: VendorOption): string =>
  flagName(o)
    .replace(/^--/, '')
    .replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

const truthy = (v: string | undefined): boolean => v === '1' || v === 'true' || v === 'yes';

/**
 * Every vendor's options, one entry per flag, for the command to register: the help names each
 * vendor that takes the flag, with what it does there, its variable and its default.
 */
export function adapterOptions(tables: readonly VendorTable[]): { flag: string; help: string }[] {
  const byName = new Map<string, { flag: string; lines: string[] }>();
  for (const t of tables) {
    for (const o of t.options ?? []) {
      const env = SWITCHES.has(o.sets) ? `${o.env}=1` : o.env;
      const line = `${t.token} (${env}${o.default === undefined ? '' : `; default ${o.default}`}): ${o.help}`;
      const seen = byName.get(flagName(o));
      if (seen === undefined) byName.set(flagName(o), { flag: o.flag, lines: [line] });
      else seen.lines.push(line);
    }
  }
  return [...byName.values()].map(({ flag, lines }) => ({ flag, help: lines.join('; ') }));
}

/** Refuses a flag the vendor does not take, naming the vendors that take it. */
function refuseOthers(table: VendorTable, given: GivenOptions, tables: readonly VendorTable[]): void {
  const own = new Set((table.options ?? []).map(optionKey));
  const takers = new Map<string, string[]>();
  for (const t of tables) {
    for (const o of t.options ?? []) {
      const v = given[optionKey(o)];
      if (own.has(optionKey(o)) || v === undefined || v === false) continue;
      const list = takers.get(flagName(o)) ?? [];
      if (!list.includes(t.token)) takers.set(flagName(o), [...list, t.token]);
    }
  }
  if (takers.size === 0) return;
  const why = [...takers].map(([flag, tokens]) => `${flag} is for ${tokens.join(', ')}`).join('; ');
  throw new SteeringError('CONFIG_INVALID', `${table.token} takes no ${[...takers.keys()].join(' or ')}: ${why}`);
}

/** Refuses anything but an http(s) URL, saying what it must be. */
function httpUrl(url: string, must: string): void {
  try {
    const u = new URL(url);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('not http(s)');
  } catch {
    throw new SteeringError('CONFIG_INVALID', `${must}, got "${url}"`);
  }
}

/** How one vendor's rows read: a switch is on by its flag or its variable; a value is the flag's, the variable's or the default. */
function reader(table: VendorTable, given: GivenOptions, env: NodeJS.ProcessEnv) {
  const row = (t: OptionTarget): VendorOption | undefined => optionFor(table, t);
  const on = (o: VendorOption | undefined): boolean =>
    o !== undefined && (given[optionKey(o)] === true || truthy(env[o.env]));
  const value = (o: VendorOption | undefined): string | undefined => {
    if (o === undefined) return undefined;
    const flag = given[optionKey(o)];
    return typeof flag === 'string' ? flag : env[o.env] || o.default;
  };
  /** `--poll (AEP_OPENHANDS_POLL)`, for a message about the option. */
  const named = (o: VendorOption | undefined, target: OptionTarget): string =>
    o === undefined ? `the ${target} option` : `${flagName(o)} (${o.env})`;
  return { row, on, value, named };
}

/**
 * The settings a vendor's options give, checked now so a bad value stops the start: flags first,
 * then the environment (D16), then each row's default.
 */
export function vendorSettings(
  table: VendorTable,
  given: GivenOptions,
  env: NodeJS.ProcessEnv,
  tables: readonly VendorTable[],
): VendorSettings {
  refuseOthers(table, given, tables);
  const { row, on, value, named } = reader(table, given, env);
  const gate: SurfaceOptions = { control: on(row('gate')) };
  const tools = value(row('gate-tools'));
  if (tools !== undefined && tools !== '') gate.gateTools = tools;
  const settings: VendorSettings = { gate };

  const control = on(row('user-plane-control'));
  if (table.userPlane !== undefined && (control || on(row('user-plane')))) {
    // The flags win over the variables the channel reads (D16).
    const planeEnv: NodeJS.ProcessEnv = { ...env };
    for (const o of table.options ?? []) {
      const flag = given[optionKey(o)];
      if (o.sets === 'user-plane-env' && typeof flag === 'string' && flag !== '') planeEnv[o.env] = flag;
    }
    settings.userPlane = { control, env: planeEnv };
  }

  if (table.source !== undefined) {
    const url = value(row('source-url')) ?? '';
    httpUrl(url, `${named(row('source-url'), 'source-url')} must be the agent server's http(s) URL`);
    const key = value(row('source-key'));
    const poll = value(row('source-poll')) ?? '';
    const seconds = Number(poll);
    if (!Number.isFinite(seconds) || seconds <= 0 || seconds > 3600)
      throw new SteeringError(
        'CONFIG_INVALID',
        `${named(row('source-poll'), 'source-poll')} must be seconds between 0 and 3600, got "${poll}"`,
      );
    settings.source = {
      spec: table.source,
      url,
      ...(key === undefined ? {} : { key }),
      pollMs: Math.round(seconds * 1000),
      deltas: on(row('source-deltas')),
    };
  }

  const spec = table.lanes?.find((l): l is AttachedLaneSpec => l.joins === 'attached');
  if (spec !== undefined) {
    const url = value(row('lane-url'));
    const tokenFile = value(row('lane-token-file'));
    if (url === undefined) {
      if (tokenFile !== undefined)
        throw new SteeringError(
          'CONFIG_INVALID',
          `${named(row('lane-token-file'), 'lane-token-file')} needs ${named(row('lane-url'), 'lane-url')}: the daemon's URL`,
        );
    } else {
      httpUrl(url, `${named(row('lane-url'), 'lane-url')} must be the daemon's http(s) URL`);
      // Checked now (exists, mode 600, not empty) so a bad file stops the start; the lane re-reads it per call.
      if (tokenFile !== undefined) readTokenFile(tokenFile);
      settings.lane = { spec, url, ...(tokenFile === undefined ? {} : { tokenFile }) };
    }
  }
  return settings;
}
