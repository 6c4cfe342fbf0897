// The one builder of a vendor end-to-end suite. A suite calls `e2eSuite(vendor, options)` once and
// gets: the loopback mock model its CLI speaks, this project's relay and adapter (with the suite's
// settings), workspaces with the CLI's own settings and the real installer's hooks, runners for the
// pinned CLI (headless, in its terminal UI, under `aep-steer run`), the operator's consumer that
// sends through the relay, and one teardown that ends all of it, leaving no process behind.
// What differs per vendor is its row in e2e-vendors.ts.
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { AuditResult } from '../../src/audit/audit.js';
import type { AdapterFlags } from '../../src/cli/adapter-command.js';
import { RESPOND_EXIT } from '../../src/cli/respond-command.js';
import { SESSIONS_EXIT, runSessions } from '../../src/cli/sessions-command.js';
import type { AepEvent } from '../../src/protocol/index.js';
import { auditClean } from './audit-clean.js';
import {
  VENDORS,
  type HookTarget,
  type Kinds,
  type RunOptions,
  type Vendor,
  type VendorWorkspace,
} from './e2e-vendors.js';
import { projectRoot } from './shared-dir.js';
import { respondVia, startTui, textSink, tmuxMissing, type Tui } from './tui.js';
import {
  bodyHas,
  startVendorStack,
  vendorBinary,
  vendorMissing,
  workspace,
  type Access,
  type Started,
  type VendorStack,
} from './vendor-e2e.js';

export type { Vendor, VendorWorkspace } from './e2e-vendors.js';

interface WorkspaceOptions<V extends Vendor> {
  /** The adapter the hooks post to; default the suite's. */
  to?: VendorStack;
  /** Hooks to this port instead (a hop between shim and adapter, or nothing listening at all). */
  port?: number;
  /** False: the CLI's settings only, no hooks. */
  hooks?: boolean;
  attentionTimeoutMs?: number;
  /** The CLI's own settings, where its row takes some (Codex's config.toml). */
  settings?: Kinds[V]['settings'];
}

export interface SuiteOptions<V extends Vendor> {
  /** How a missing CLI is named (default: the vendor). */
  label?: string;
  /** The suite drives a terminal UI: tmux must be there too. */
  tmux?: boolean;
  /** Tokens-file mode for the relay (D18–D20); default one shared token. */
  access?: Access;
  /**
   * The adapter's settings as a user sets them; a function is given the suite's home (`e2e.home`),
   * which is then made (its CLI settings written) before the adapter starts, and gets the hooks after.
   */
  env?: NodeJS.ProcessEnv | ((home: VendorWorkspace, e2e: E2e<V>) => NodeJS.ProcessEnv);
  /** The adapter's flags; a function, like `env`, is given the home (a daemon started in it). */
  flags?: AdapterFlags | ((home: VendorWorkspace, e2e: E2e<V>) => AdapterFlags | Promise<AdapterFlags>);
}

interface Held<V extends Vendor> {
  session: string;
  /** Lets the held request's reply go out. */
  release(): void;
  run: Promise<Kinds[V]['run']>;
}

interface SlowRun<V extends Vendor> {
  session: string;
  /** The slow call's `tool.requested`. */
  tool: AepEvent;
  run: Promise<Kinds[V]['run']>;
  release(): void;
}

interface TuiOptions {
  /** The tmux session's name (default: the vendor). */
  name?: string;
  /** Default: the CLI's own TUI. */
  argv?: string[];
  /** Default: the workspace's CLI environment. */
  env?: NodeJS.ProcessEnv;
}

export interface E2e<V extends Vendor> {
  readonly vendor: V;
  /** False when the pinned CLI (or tmux) is missing: its failure is registered and the suite has nothing to run. */
  readonly installed: boolean;
  /** The pinned CLI's binary. */
  readonly binary: string;
  /** Set once the suite started (uvu's `before`). */
  mock: Kinds[V]['mock'];
  stack: VendorStack;
  /**
   * The suite's home, made before the adapter: when `env` or `flags` is a function of it, or the
   * vendor's adapter reads the CLI's environment (Cline's hub).
   */
  home: VendorWorkspace;
  /** Another adapter with settings of its own, on a relay of its own; it talks to the same mock. */
  adapter(env?: NodeJS.ProcessEnv, flags?: AdapterFlags): Promise<VendorStack>;
  /** A fresh HOME with a project in it, the CLI's settings pointing at the mock, the hooks installed. */
  workspace(o?: WorkspaceOptions<V>): Promise<VendorWorkspace>;
  /** One headless run of the CLI, to its end. */
  run(ws: VendorWorkspace, prompt: string, o?: RunOptions): Promise<Kinds[V]['run']>;
  /** A headless run; resolves once its session is on the stream (`to`'s, default the suite's). */
  startRun(
    ws: VendorWorkspace,
    prompt: string,
    o?: RunOptions & { to?: VendorStack },
  ): Promise<{ session: string; run: Promise<Kinds[V]['run']> }>;
  /**
   * A headless run in a fresh workspace whose one shell call waits for a gate file: resolves once
   * the call is on the stream (`to`'s, default the suite's); `release` lets it end.
   */
  slowRun(tag: string, o?: { to?: VendorStack }): Promise<SlowRun<V>>;
  /**
   * A headless run whose first model request that matches is held: resolves once it arrived and
   * the run's session is on the stream (`to`'s, default the suite's), so what the test sends next
   * is queued before any moment after that request.
   */
  startHeld(
    ws: VendorWorkspace,
    prompt: string,
    match: (r: Kinds[V]['request']) => boolean,
    o?: RunOptions & { to?: VendorStack },
  ): Promise<Held<V>>;
  /** The CLI's model requests so far. */
  requests(): Kinds[V]['request'][];
  /** Those of the turn whose prompt carries `tag`. */
  requestsOf(tag: string): Kinds[V]['request'][];
  /** Those of one session, where the CLI names it in its requests (Claude Code). */
  requestsIn(session: string): Kinds[V]['request'][];
  /** The session a model request belongs to, where the CLI names it (Claude Code). */
  sessionOf(r: Kinds[V]['request']): string | undefined;
  /** Those that carry `text` anywhere in their body. */
  withText(text: string): Kinds[V]['request'][];
  /** What the tool calls after the prompt carrying `tag` gave back, as the model read it. */
  toolOutputs(tag: string): string[];
  /** The prompt of the turn a model request belongs to. */
  turnOf(r: Kinds[V]['request']): string;
  /** The CLI's terminal UI in tmux; resolves once it takes a prompt. Ended with the suite. */
  tui(ws: VendorWorkspace, o?: TuiOptions): Promise<Tui>;
  /**
   * Types a prompt into the TUI; resolves with the next event on the stream that `match`es (by
   * default the next `attention.requested`); a miss says what the terminal shows.
   */
  typed(tui: Tui, prompt: string, what?: string, match?: (e: AepEvent) => boolean): Promise<AepEvent>;
  /**
   * Esc in the TUI while `requested` is held: the request ends dismissed at once (D34), a later
   * `respond allow` exits not pending and nothing is recorded as answered. Resolves with how long
   * the end took after the key.
   */
  escDismisses(tui: Tui, requested: AepEvent): Promise<number>;
  /** The command line of `aep-steer run <vendor> --port <the adapter's> …args`, from the sources. */
  aepRun(...args: string[]): string[];
  /** The environment `aep-steer run` gets beside the adapter: the CLI's, its binary, the state directory. */
  runEnv(ws: VendorWorkspace): NodeJS.ProcessEnv;
  /** `aep-steer sessions` as the operator runs it: the table it printed (it must exit 0). */
  sessions(): Promise<string>;
  /** `aep-steer respond` as the operator runs it. */
  respond(session: string, request: string | undefined, word: string): Promise<{ code: number; out: string }>;
  /** A process the suite started itself (the CLI in stream-json mode), ended with the suite. */
  track<P extends { kill(): void }>(p: P): P;
  /** A teardown step of the suite's own, before the adapter ends (last registered, first run). */
  defer(step: () => unknown): void;
  /** One after the adapter ended: what the adapter talks to (a vendor's daemon). */
  deferAfterAdapter(step: () => unknown): void;
  /** `aep-steer audit` of the suite adapter's log: fails with the audit's report on any violation. */
  auditClean(): Promise<AuditResult>;
}

/** uvu drops an error thrown in a `before` (every test then just counts as not run): it is printed. */
export const reported = (setUp: () => Promise<void>) => async (): Promise<void> => {
  try {
    await setUp();
  } catch (err) {
    console.error(`test.before failed: ${(err as Error).stack ?? String(err)}`);
    throw err;
  }
};

class Suite<V extends Vendor> implements E2e<V> {
  mock!: Kinds[V]['mock'];
  stack!: VendorStack;
  home!: VendorWorkspace;
  private readonly row;
  private readonly dirs: string[] = [];
  private readonly stacks: VendorStack[] = [];
  private readonly started: { kill(): void }[] = [];
  private readonly tuis: (() => Promise<void>)[] = [];
  private readonly deferred: (() => unknown)[] = [];
  private readonly afterAdapter: (() => unknown)[] = [];

  constructor(
    readonly vendor: V,
    readonly installed: boolean,
    readonly binary: string,
    private readonly o: SuiteOptions<V>,
  ) {
    this.row = VENDORS[vendor];
  }

  async start(): Promise<void> {
    const { o, row } = this;
    this.mock = await row.api.start();
    const homeFirst = typeof o.env === 'function' || typeof o.flags === 'function' || row.adapterEnv !== undefined;
    if (homeFirst) this.home = await this.configured({});
    const env = {
      ...(homeFirst ? row.adapterEnv?.(this.home.env) : {}),
      ...(typeof o.env === 'function' ? o.env(this.home, this) : o.env),
    };
    const flags = typeof o.flags === 'function' ? await o.flags(this.home, this) : o.flags;
    this.stack = await startVendorStack(this.vendor, env, flags, o.access);
    if (homeFirst) this.hooks(this.home, {});
  }

  async close(): Promise<void> {
    const steps = [
      ...this.tuis,
      ...this.started.map((s) => () => s.kill()),
      ...this.deferred.reverse(),
      ...this.stacks.reverse().map((s) => () => s.close()),
      () => this.stack?.close(),
      ...this.afterAdapter.reverse(),
      () => this.mock?.close(),
      ...this.dirs.map((d) => () => rmSync(d, { recursive: true, force: true })),
    ];
    // Every step runs, whatever failed before it: a daemon left running would outlive the suite.
    let failed: unknown;
    for (const step of steps) {
      try {
        await step();
      } catch (err) {
        failed ??= err;
      }
    }
    if (failed !== undefined) throw failed;
  }

  private async configured(o: WorkspaceOptions<V>): Promise<VendorWorkspace> {
    const ws = workspace(`aep-${this.vendor}-`);
    this.dirs.push(ws.root);
    return { ...ws, env: await this.row.setUp(ws, this.mock, this.binary, o.settings) };
  }

  private hooks(ws: VendorWorkspace, o: WorkspaceOptions<V>): void {
    const to = o.to ?? this.stack;
    const target: HookTarget = {
      port: o.port ?? to.running.adapter.port,
      secret: to.secret,
      stateDir: to.stateDir,
      ...(o.attentionTimeoutMs === undefined ? {} : { attentionTimeoutMs: o.attentionTimeoutMs }),
    };
    this.row.install(ws, target, this.binary);
  }

  async adapter(env: NodeJS.ProcessEnv = {}, flags: AdapterFlags = {}): Promise<VendorStack> {
    const stack = await startVendorStack(this.vendor, env, flags, this.o.access);
    this.stacks.push(stack);
    return stack;
  }

  async workspace(o: WorkspaceOptions<V> = {}): Promise<VendorWorkspace> {
    const ws = await this.configured(o);
    if (o.hooks !== false) this.hooks(ws, o);
    return ws;
  }

  private begin(ws: VendorWorkspace, prompt: string, o: RunOptions): Started<Kinds[V]['run']> {
    const run = this.row.run;
    if (run === undefined) throw new Error(`${this.row.pinned} runs no headless prompt here`);
    const started = run(ws, this.mock, this.binary, prompt, o);
    this.started.push(started);
    return started;
  }

  run(ws: VendorWorkspace, prompt: string, o: RunOptions = {}): Promise<Kinds[V]['run']> {
    return this.begin(ws, prompt, o).done;
  }

  async startRun(
    ws: VendorWorkspace,
    prompt: string,
    o: RunOptions & { to?: VendorStack } = {},
  ): Promise<{ session: string; run: Promise<Kinds[V]['run']> }> {
    const to = o.to ?? this.stack;
    const from = to.events.length;
    const run = this.begin(ws, prompt, o).done;
    return { session: await to.newSession(from), run };
  }

  async slowRun(tag: string, o: { to?: VendorStack } = {}): Promise<SlowRun<V>> {
    const prompt = this.row.api.slowPrompt;
    if (prompt === undefined) throw new Error(`the mock of ${this.row.pinned} is scripted per test: no slow run here`);
    const to = o.to ?? this.stack;
    const ws = await this.workspace({ to });
    const gate = join(ws.root, `${tag}.go`);
    const { session, run } = await this.startRun(ws, prompt(gate, tag), { to });
    const tool = await to.waitFor(`${tag}: the slow tool call`, () => to.find(session, 'tool.requested'));
    return { session, tool, run, release: () => writeFileSync(gate, '') };
  }

  async startHeld(
    ws: VendorWorkspace,
    prompt: string,
    match: (r: Kinds[V]['request']) => boolean,
    o: RunOptions & { to?: VendorStack } = {},
  ): Promise<Held<V>> {
    const to = o.to ?? this.stack;
    const from = to.events.length;
    const hold = this.row.api.hold(this.mock, match);
    const run = this.begin(ws, prompt, o).done;
    await Promise.race([
      hold.arrived,
      run.then((r) => {
        throw new Error(`${this.row.pinned} exited before the held request: ${r.stderr.slice(-2000)}`);
      }),
    ]);
    const session = await to.newSession(from);
    return { session, release: hold.release, run };
  }

  requests(): Kinds[V]['request'][] {
    return this.row.api.requests(this.mock);
  }

  turnOf(r: Kinds[V]['request']): string {
    return this.row.api.turnOf(this.row.api.body(r));
  }

  requestsOf(tag: string): Kinds[V]['request'][] {
    return this.requests().filter((r) => this.turnOf(r).includes(tag));
  }

  sessionOf(r: Kinds[V]['request']): string | undefined {
    const of = this.row.sessionOf;
    if (of === undefined) throw new Error(`${this.row.pinned} names no session in its model requests`);
    return of(r);
  }

  requestsIn(session: string): Kinds[V]['request'][] {
    return this.requests().filter((r) => this.sessionOf(r) === session);
  }

  withText(text: string): Kinds[V]['request'][] {
    return this.requests().filter((r) => bodyHas(this.row.api.body(r), text));
  }

  toolOutputs(tag: string): string[] {
    return this.requests().flatMap((r) => this.row.api.outputsAfter(this.row.api.body(r), tag));
  }

  async tui(ws: VendorWorkspace, o: TuiOptions = {}): Promise<Tui> {
    const own = this.row.tui;
    if (own === undefined) throw new Error(`${this.row.pinned} has no terminal UI here`);
    const tui = startTui(o.name ?? this.vendor, ws.project, o.env ?? ws.env, o.argv ?? [this.binary, ...own.args]);
    const leaves = o.argv === undefined ? own.leaves : undefined;
    this.tuis.push(async () => {
      await tui.end();
      await leaves?.(ws, this.binary);
    });
    await tui.shows(own.ready, 90_000).catch((err: Error) => {
      throw new Error(`${err.message}\nadapter errors: ${this.stack.errors.join('\n')}`);
    });
    return tui;
  }

  async typed(
    tui: Tui,
    prompt: string,
    what = 'attention.requested',
    match: (e: AepEvent) => boolean = (e) => e.type === 'attention.requested',
  ): Promise<AepEvent> {
    const from = this.stack.events.length;
    await tui.submit(prompt);
    return this.stack
      .waitFor(what, () => this.stack.events.slice(from).find(match))
      .catch((err: Error) => {
        throw new Error(`${err.message}\nthe TUI shows:\n${tui.screen()}`);
      });
  }

  async escDismisses(tui: Tui, requested: AepEvent): Promise<number> {
    const { events } = this.stack;
    const pressed = Date.now();
    tui.keys('Escape');
    const resolved = await this.stack.waitFor('attention.resolved', () =>
      events.find((e) => e.type === 'attention.resolved' && e.subject === requested.id),
    );
    const tookMs = Date.now() - pressed;
    console.log(`  Esc in the ${this.row.pinned} TUI → attention.resolved {dismissed} in ${tookMs} ms`);
    assert.is((resolved.data as { resolution: string }).resolution, 'dismissed');
    const late = await this.respond(requested.session!, requested.id, 'allow');
    assert.is(late.code, RESPOND_EXIT.notPending, late.out);
    assert.match(late.out, 'dismissed at the agent');
    assert.not.ok(
      events.some((e) => e.type === 'attention.answered' && e.subject === requested.id),
      'nothing recorded as answered',
    );
    return tookMs;
  }

  aepRun(...args: string[]): string[] {
    const as = this.row.aepRun?.as;
    if (as === undefined) throw new Error(`${this.row.pinned} has no \`aep-steer run\``);
    const entry = join(projectRoot, 'test', 'support', 'run-cli-entry.ts');
    const tsx = join(projectRoot, 'node_modules', 'tsx', 'dist', 'esm', 'index.mjs');
    return [
      process.execPath,
      '--import',
      tsx,
      entry,
      'run',
      as,
      '--port',
      String(this.stack.running.adapter.port),
      ...args,
    ];
  }

  runEnv(ws: VendorWorkspace): NodeJS.ProcessEnv {
    const binVar = this.row.aepRun?.binVar;
    return {
      ...ws.env,
      ...(binVar === undefined ? {} : { [binVar]: this.binary }),
      AEP_STATE_DIR: this.stack.stateDir,
    };
  }

  async sessions(): Promise<string> {
    const out = textSink();
    const code = await runSessions(
      { relay: this.stack.relayUrl, token: this.stack.relayToken, sender: 'e2e-roster' },
      { out: out.stream },
    );
    assert.is(code, SESSIONS_EXIT.ok, out.text());
    return out.text();
  }

  respond(session: string, request: string | undefined, word: string): Promise<{ code: number; out: string }> {
    return respondVia(this.stack.relayUrl, this.stack.relayToken, this.stack.sender)(session, request, word);
  }

  track<P extends { kill(): void }>(p: P): P {
    this.started.push(p);
    return p;
  }

  defer(step: () => unknown): void {
    this.deferred.push(step);
  }

  deferAfterAdapter(step: () => unknown): void {
    this.afterAdapter.push(step);
  }

  auditClean(): Promise<AuditResult> {
    return auditClean(this.stack.logPath);
  }
}

/**
 * Registers the suite's start (`before`) and its teardown (`after`) with uvu, or, when the pinned
 * CLI (or tmux for a suite that needs it) is missing, the failing test that says so; a suite's own
 * `before` registered after this call runs once the stack is up.
 */
export function e2eSuite<V extends Vendor>(vendor: V, o: SuiteOptions<V> = {}): E2e<V> {
  const bin = vendorBinary(vendor);
  const pinned = VENDORS[vendor].pinned;
  const missing = `${pinned} is not installed in .vendor-clis (run scripts/install-vendor-cli.sh ${vendor})${o.tmux ? ', or tmux is missing (apt-get install tmux)' : ''}`;
  const installed = !vendorMissing(o.tmux && tmuxMissing() ? undefined : bin, o.label ?? vendor, missing);
  const suite = new Suite(vendor, installed, bin ?? '', o);
  if (installed) {
    test.before(reported(() => suite.start()));
    test.after(() => suite.close());
  }
  return suite;
}
