// A vendor table's native lanes (D30): how the adapter makes or attaches each one and how
// `aep-steer run` joins it. Rows of the table; the lane itself speaks streams/lane.ts.
import type { SteeringError } from '../protocol/errors.js';
import type { SteeringLane } from '../streams/lane.js';
import type { Launcher } from '../streams/spawner.js';

/** A vendor table's native lane (D30): its name, where its behaviour was observed, and how a session gets it. */
interface LaneSpecBase {
  name: string;
  evidence: string;
}

/**
 * A lane the adapter owns: made at the adapter's start, running nothing until `aep-steer run`
 * opens it (the Codex app-server, a headless Claude Code run).
 */
export interface OwnedLaneSpec extends LaneSpecBase {
  joins: 'owned';
  /** The vendor's own command, which `aep-steer run` also takes for the vendor token (`run claude`). */
  command?: string;
  /** Builds the lane (loaded only by the adapter, never by the hook shim); nothing runs until it is opened. */
  make(env: NodeJS.ProcessEnv, stateDir: string): Promise<SteeringLane>;
  /** `aep-steer run`: the vendor's own client joined to the opened lane (what `open` answered), with the person's args. */
  client?(
    env: NodeJS.ProcessEnv,
    opened: Record<string, unknown>,
    args: readonly string[],
    cwd: string,
  ): { bin: string; args: string[] };
  /** `aep-steer run` where no client of the vendor's own joins the lane: the run itself (a headless session on the caller's stdio), to its exit code. */
  run?: LaneRun;
  /**
   * `aep-steer run` starts the vendor's server itself, with the caller's environment and in the
   * caller's directory, where the opened lane says; the adapter is asked to open the lane again
   * (its answer lists the servers it joined as `servers`) and the client joins `address`.
   */
  serve?(env: NodeJS.ProcessEnv, opened: Record<string, unknown>, cwd: string): Promise<ServedLane>;
  /** D45: how the adapter starts a worker on this lane. */
  spawn?: SpawnOn;
}

/**
 * D45: how the adapter starts a worker on a lane (`x.{vendor}.control.spawn`), with the adapter's
 * environment; `open` opens the lane (what `aep-steer run` asks of the adapter), `lane` is the lane
 * the adapter runs under the spec's name.
 */
type SpawnOn = (
  env: NodeJS.ProcessEnv,
  stateDir: string,
  open: () => Promise<Record<string, unknown>>,
  lane?: SteeringLane,
) => Promise<Launcher>;

/** A server `aep-steer run` started for its client: where it listens, and its end once the client exits. */
export interface ServedLane {
  address: string;
  stop(): Promise<void>;
}

/** `aep-steer run`'s own session on a lane (headless, on the caller's stdio), to its exit code. */
type LaneRun = (
  env: NodeJS.ProcessEnv,
  opened: Record<string, unknown>,
  args: readonly string[],
  cwd: string,
  io: { in: NodeJS.ReadableStream; out: NodeJS.WritableStream; err: NodeJS.WritableStream },
) => Promise<number>;

/**
 * A lane on a daemon someone else runs (`qwen serve`): attached at the adapter's start when the
 * vendor's `lane-url` option gives its URL, its token from the `lane-token-file` option's file.
 */
export interface AttachedLaneSpec extends LaneSpecBase {
  joins: 'attached';
  /** Loaded on use: the hook path (the shim reads the vendor table) never loads the lane's modules. */
  attach(o: { url: string; tokenFile?: string; onError: (e: SteeringError) => void }): Promise<SteeringLane>;
  /**
   * D45: with `--spawn-root`, the lane the adapter runs under this name instead: the attached one
   * (when a URL is given) and the daemons of the workers it spawns (`spawn`), followed together.
   */
  hosts?(attached: SteeringLane | undefined, onError: (e: SteeringError) => void): Promise<SteeringLane>;
  spawn?: SpawnOn;
  /** `aep-steer run`: a session of its own on the daemon the adapter's lane attached (what `open` answered). */
  run?: LaneRun;
}

export type LaneSpec = OwnedLaneSpec | AttachedLaneSpec;
