// D45: the adapter's spawn settings (`--spawn-root`, repeatable; `--max-spawned`) and the spawner
// they make from the vendor table's launcher. No root: spawning is off, and the adapter has no
// home session at all, so a spawn meets no one to take it.
import { delimiter } from 'node:path';
import { SteeringError } from '../protocol/index.js';
import { stateDir } from '../protocol/state-dir.js';
import { tableFor } from '../adapters/registry.js';
import type { LaneSpec } from '../adapters/lane-spec.js';
import { openLanes } from '../streams/lanes.js';
import { steers, type Lane } from '../streams/lane.js';
import { spawner, type Spawner } from '../streams/spawner.js';

export interface SpawnConfig {
  roots: string[];
  max: number;
}

/** Collects a repeatable flag's values (`--spawn-root A --spawn-root B`), joined by NUL, which no path holds. */
export const collectRoots = (v: string, prev: string | undefined): string => (prev === undefined ? v : `${prev}\0${v}`);

const spawnLane = (token: string): LaneSpec | undefined => tableFor(token)?.lanes?.find((l) => l.spawn !== undefined);

/**
 * The spawn settings from the flags, else the environment (D16): `AEP_SPAWN_ROOT` holds the roots
 * joined by the platform's path separator (`:`, `;` on Windows) as PATH does, `AEP_MAX_SPAWNED`
 * the cap. A flag replaces its variable whole. Undefined when no root is given (spawn off).
 */
export function spawnConfig(
  token: string,
  joined: string | undefined,
  flagMax: string | undefined,
  env: NodeJS.ProcessEnv = {},
): SpawnConfig | undefined {
  const roots =
    joined !== undefined
      ? joined.split('\0').filter((r) => r !== '')
      : (env.AEP_SPAWN_ROOT ?? '').split(delimiter).filter((r) => r !== '');
  const max = flagMax ?? (env.AEP_MAX_SPAWNED || undefined);
  if (roots.length === 0) {
    if (max !== undefined)
      throw new SteeringError(
        'CONFIG_INVALID',
        '--max-spawned (AEP_MAX_SPAWNED) needs at least one --spawn-root (AEP_SPAWN_ROOT): spawning is off without one',
      );
    return undefined;
  }
  if (spawnLane(token) === undefined)
    throw new SteeringError(
      'CONFIG_INVALID',
      `the ${token} adapter cannot start sessions: drop --spawn-root (and AEP_SPAWN_ROOT)`,
    );
  const n = Number(max ?? '4');
  if (!Number.isInteger(n) || n < 1 || n > 64)
    throw new SteeringError('CONFIG_INVALID', `--max-spawned (AEP_MAX_SPAWNED) must be an integer 1-64, got "${max}"`);
  return { roots, max: n };
}

/** The spawner of an adapter: the vendor's launcher, joined to the adapter's own lanes. */
export async function adapterSpawner(
  token: string,
  cfg: SpawnConfig,
  env: NodeJS.ProcessEnv,
  lanes: readonly Lane[],
): Promise<Spawner> {
  const spec = spawnLane(token);
  // What opening the adapter's lanes answered for this lane (Claude Code's stream-json names its socket).
  const open = async () => ((await openLanes(lanes))[spec!.name] ?? {}) as Record<string, unknown>;
  const lane = lanes.filter(steers).find((l) => l.name === spec!.name);
  const launch = await spec!.spawn!(env, stateDir(env), open, lane);
  return spawner({ roots: cfg.roots, max: cfg.max, launch });
}
