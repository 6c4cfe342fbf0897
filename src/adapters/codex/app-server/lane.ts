// The Codex app-server lane (D30): an app-server this adapter owns on a private Unix socket
// (`codex app-server --listen unix://PATH`), which the person's stock TUI joins with
// `codex --remote unix://PATH` (`aep-steer run codex`). The lane follows every thread the server
// announces (`thread/started` reaches every client; `thread/resume` subscribes to its turns and
// items) and steers the running turn with `turn/steer`. Facts and answers as in streams/lane.ts;
// what each vendor message means is in the tables below, with where it was observed.
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { Subject } from 'rxjs';
import type { LaneFact, LaneOutcome, LaneRequest, NativeLane } from '../../../streams/lane.js';
import { endTools, findTools, outlasting, pidsUnder, processTable, shellToolsSince } from '../../tool-processes.js';
import { connectRpc, RpcFailure, RpcUnreachable, type RpcClient, type ServerRequest } from './rpc.js';

const OBSERVED = 'native-lanes.md "Observed on the pinned binaries", Codex 0.171.0 app-server';

/**
 * `turn/steer` refusals (JSON-RPC -32600, no structured data in 0.171.0: the message is matched).
 * Both "the turn is over" answers are D31 `turn-ended`: never retried as a `turn/start`.
 */
export const STEER_REFUSALS: readonly { match: RegExp; reason: 'turn-ended' | 'refused'; evidence: string }[] = [
  { match: /no active turn/i, reason: 'turn-ended', evidence: `${OBSERVED}: "no active turn to steer"` },
  {
    match: /expected active turn id/i,
    reason: 'turn-ended',
    evidence: `${OBSERVED}: "expected active turn id \`X\` but found \`Y\`"`,
  },
  { match: /thread not found/i, reason: 'refused', evidence: `${OBSERVED}: "thread not found: …"` },
];

/**
 * The approvals the server asks every client of the thread for (server requests; the first answer
 * wins and `serverRequest/resolved` tells the others), with the tool name the hook lane reports for
 * the same action and what it does (D35), from the request or from the item it names.
 */
export const APPROVALS: Record<
  string,
  { tool: string; detail: (p: Record<string, unknown>, item?: Record<string, unknown>) => string | undefined }
> = {
  'item/commandExecution/requestApproval': {
    tool: 'Bash',
    detail: (p) => (typeof p.command === 'string' ? p.command : undefined),
  },
  // Observed: the request carries no paths; its `fileChange` item, started just before, lists them.
  'item/fileChange/requestApproval': {
    tool: 'apply_patch',
    detail: (p, item) =>
      changesOf(item) ?? (typeof p.grantRoot === 'string' ? `write under ${p.grantRoot}` : str(p.reason)),
  },
};
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** `add /w/a.txt, update /w/b.ts`: a fileChange item's `changes` (`{path, kind: {type}}`), as the TUI lists them. */
export function changesOf(item: Record<string, unknown> | undefined): string | undefined {
  const changes = Array.isArray(item?.changes) ? (item.changes as Record<string, unknown>[]) : [];
  const said = changes
    .filter((c) => typeof c?.path === 'string')
    .map((c) => {
      const kind = str((c.kind as { type?: unknown } | undefined)?.type) ?? str(c.kind);
      return kind === undefined ? String(c.path) : `${kind} ${String(c.path)}`;
    });
  return said.length === 0 ? undefined : said.join(', ');
}

/**
 * `deny` is `decline` (not run; the turn goes on, the model told "rejected by user"), as deny means
 * on every vendor (D34). Observed: an escalated command's `availableDecisions` lists `accept` and
 * `cancel` only, yet 0.171.0 takes `decline` there as well; `cancel` would interrupt the turn.
 */
const DENY = 'decline';

export interface CodexLaneOptions {
  /** The `codex` binary. */
  bin: string;
  /** The private socket, in the adapter's state directory (dir 700, socket 600). */
  socketPath: string;
  /** The app-server's environment: the hooks it runs reach this adapter through it. */
  env?: NodeJS.ProcessEnv;
  /** How long `open` waits for a started server's socket. */
  startMs?: number;
  /**
   * Join a server someone else started (`aep-steer run codex`, with the person's environment):
   * `open` fails when none answers on the socket, and never starts or removes one.
   */
  attachOnly?: boolean;
}

const userMessageOf = (params: Record<string, unknown>): { clientId?: string; turnId?: string } | undefined => {
  const item = params.item as Record<string, unknown> | undefined;
  if (item?.type !== 'userMessage' || typeof item.clientId !== 'string') return undefined;
  return { clientId: item.clientId, ...(typeof params.turnId === 'string' ? { turnId: params.turnId } : {}) };
};

/** What the app-server lane is to the table, one server or all of a state directory's: its name, deliveries and way in. */
export const APP_SERVER_LANE = {
  name: 'app-server',
  deliveries: ['steer'],
  how: 'start it with `aep-steer run codex`',
} as const satisfies Pick<NativeLane, 'name' | 'deliveries' | 'how'>;

export function codexAppServerLane(opts: CodexLaneOptions): NativeLane {
  const facts$ = new Subject<LaneFact>();
  /** Threads this client resumed (reached), with their running turn. */
  const threads = new Map<string, { turn?: string }>();
  /** Threads the server announced, followed once they can be resumed. */
  const announced = new Set<string>();
  /** Approvals asked and not settled, by their request id: the thread, the item, the id to answer. */
  const asked = new Map<string, { threadId: string; itemId?: string; id: number | string; ours?: boolean }>();
  /** Items running now that an approval may name (a fileChange's paths), by thread and item id. */
  const items = new Map<string, Record<string, unknown>>();
  /** Approvals settled elsewhere (the TUI), waiting for their item's end to say how. */
  const settledAt = new Map<string, string>();
  /** Steers sent, by command id, until their receipt. */
  const sent = new Set<string>();
  /** Shell commands started and not completed, by thread and item id: what an interrupt may leave running. */
  const commands = new Map<string, string>();
  /** What ran under the server as each thread's turn started: what is new at an interrupted end, the turn started. */
  const baseline = new Map<string, Set<number>>();
  /** Threads whose interrupt asked for their tool processes to be ended too (D33 `kill_tools`). */
  const killing = new Set<string>();
  /** A turn end waiting for its tool processes to be ended: later facts go out after it, in order. */
  let behind: Promise<void> | undefined;
  let rpc: RpcClient | undefined;
  let child: ChildProcess | undefined;
  let opening: Promise<RpcClient> | undefined;
  let closing = false;
  const address = `unix://${opts.socketPath}`;

  const fact = (f: LaneFact): void => {
    if (behind === undefined) facts$.next(f);
    else behind = behind.then(() => facts$.next(f));
  };
  /** A fact that is ready later (a turn end after its tools were ended); the facts after it wait for it. */
  const factLater = (f: Promise<LaneFact>): void => {
    const mine = (behind ?? Promise.resolve()).then(() => f).then((x) => facts$.next(x));
    behind = mine;
    void mine.finally(() => {
      if (behind === mine) behind = undefined;
    });
  };

  /**
   * The app-server's pid: the one this lane started, or one started elsewhere (`aep-steer run
   * codex`) found by the socket it was told to listen on (its tool processes are its descendants).
   */
  const serverPid = (): number | undefined =>
    child?.pid ?? processTable()?.find((p) => p.argv.includes('app-server') && p.argv.includes(address))?.pid;

  /**
   * D33, observed on 0.171.0: `turn/interrupt` ends the turn (`interrupted`) but a running shell
   * command's item never completes and its process goes on under the app-server. The turn's end
   * names such processes; on `kill_tools` the lane ends them first and names them `killed`.
   */
  function interruptedEnd(
    base: Extract<LaneFact, { kind: 'turn.ended' }>,
    open: string[],
    before: Set<number> | undefined,
    kill: boolean,
  ): void {
    const pid = serverPid();
    const left = findTools(pid, open);
    // Observed with the TUI as client: a command's item is announced only when it returns, so
    // the shell tools the turn started are looked for too.
    if (before !== undefined)
      for (const t of shellToolsSince(pid, before)) if (!left.some((l) => l.pid === t.pid)) left.push(t);
    if (left.length === 0) {
      fact(base);
      return;
    }
    // What the vendor is still ending is neither left running nor ours to end: only what outlasts it is.
    factLater(
      outlasting(left)
        .then(async (still) => {
          if (still.length === 0) return base;
          if (!kill) return { ...base, leftRunning: still };
          const r = await endTools(still);
          return {
            ...base,
            ...(r.killed.length ? { killed: r.killed } : {}),
            ...(r.leftRunning.length ? { leftRunning: r.leftRunning } : {}),
          };
        })
        .catch(() => ({ ...base, leftRunning: left })),
    );
  }

  async function follow(threadId: string): Promise<void> {
    if (threads.has(threadId) || rpc === undefined) return;
    threads.set(threadId, {});
    try {
      const r = (await rpc.call('thread/resume', { threadId })) as {
        thread?: { turns?: { id: string; status: string }[] };
      };
      const running = r.thread?.turns?.find((t) => t.status === 'inProgress');
      fact({ kind: 'attached', session: threadId, at: Date.now() });
      if (running !== undefined && threads.get(threadId)?.turn === undefined) {
        threads.set(threadId, { turn: running.id });
        turnStarts(threadId);
        fact({ kind: 'turn.started', session: threadId, at: Date.now(), turnId: running.id });
      }
    } catch {
      // Observed: a thread just announced has no rollout yet ("no rollout found"); its next
      // notification (its status turning active as its first turn starts) tries again.
      threads.delete(threadId);
    }
  }

  function onRequest(r: ServerRequest): void {
    const kind = APPROVALS[r.method];
    const threadId = str(r.params.threadId);
    if (kind === undefined || threadId === undefined || !threads.has(threadId)) return;
    const approvalId = String(r.id);
    if (asked.has(approvalId)) return;
    const itemId = str(r.params.itemId);
    asked.set(approvalId, {
      threadId,
      id: r.id,
      ...(itemId ? { itemId } : {}),
    });
    const detail = kind.detail(r.params, itemId === undefined ? undefined : items.get(`${threadId}/${itemId}`));
    fact({
      kind: 'approval',
      session: threadId,
      at: Date.now(),
      approvalId,
      request: {
        kind: 'permission',
        prompt: `Permission requested: ${kind.tool}`,
        subject: kind.tool,
        options: [
          { id: 'allow', label: 'Allow' },
          { id: 'deny', label: 'Deny' },
        ],
        context: { tool_name: kind.tool },
        // The TUI shows the same request and may answer it first.
        respondVia: ['control', 'oob'],
        ...(detail === undefined ? {} : { detail }),
      },
    });
  }

  /** An approval settled by another client: its item's end says whether it was allowed. */
  function settledElsewhere(itemId: string | undefined, threadId: string, status: string | undefined): void {
    for (const [approvalId, a] of asked) {
      if (a.threadId !== threadId || (itemId !== undefined && a.itemId !== itemId) || !settledAt.has(approvalId))
        continue;
      asked.delete(approvalId);
      settledAt.delete(approvalId);
      const approved = status === undefined ? undefined : status !== 'declined';
      fact({
        kind: 'approval.resolved',
        session: threadId,
        at: Date.now(),
        approvalId,
        ...(approved === undefined ? {} : { approved }),
      });
    }
  }

  function onNotification(method: string, p: Record<string, unknown>): void {
    const threadId = typeof p.threadId === 'string' ? p.threadId : undefined;
    const turn = p.turn as { id?: string; status?: string } | undefined;
    if (threadId !== undefined && announced.has(threadId) && !threads.has(threadId)) void follow(threadId);
    switch (method) {
      case 'thread/started': {
        const id = (p.thread as { id?: unknown } | undefined)?.id;
        if (typeof id !== 'string') return;
        announced.add(id);
        void follow(id);
        return;
      }
      case 'turn/started':
        if (threadId === undefined || typeof turn?.id !== 'string' || !threads.has(threadId)) return;
        threads.set(threadId, { turn: turn.id });
        turnStarts(threadId);
        fact({ kind: 'turn.started', session: threadId, at: Date.now(), turnId: turn.id });
        return;
      case 'serverRequest/resolved': {
        const a = asked.get(String(p.requestId));
        if (a === undefined) return;
        if (a.ours === true) asked.delete(String(p.requestId));
        else settledAt.set(String(p.requestId), a.threadId);
        return;
      }
      case 'turn/completed':
        if (threadId === undefined || typeof turn?.id !== 'string' || !threads.has(threadId)) return;
        // An approval settled elsewhere whose item never ended was cancelled with its turn.
        settledElsewhere(undefined, threadId, undefined);
        for (const k of items.keys()) if (k.startsWith(`${threadId}/`)) items.delete(k);
        threads.set(threadId, {});
        turnEnded(threadId, {
          kind: 'turn.ended',
          session: threadId,
          at: Date.now(),
          turnId: turn.id,
          status: String(turn.status),
          // Observed: `turn/interrupt` ends the turn with status `interrupted` within ~100 ms.
          interrupted: turn.status === 'interrupted',
        });
        return;
      case 'item/started':
      case 'item/completed': {
        const item = p.item as { id?: unknown; status?: unknown; type?: unknown } | undefined;
        if (threadId !== undefined && typeof item?.id === 'string' && item.type === 'fileChange') {
          if (method === 'item/started') items.set(`${threadId}/${item.id}`, item as Record<string, unknown>);
          else items.delete(`${threadId}/${item.id}`);
        }
        if (threadId !== undefined && typeof item?.id === 'string' && item.type === 'commandExecution') {
          const command = str((item as { command?: unknown }).command);
          if (method === 'item/started' && command !== undefined) commands.set(`${threadId}/${item.id}`, command);
          else commands.delete(`${threadId}/${item.id}`);
        }
        if (method === 'item/completed' && threadId !== undefined && typeof item?.id === 'string')
          settledElsewhere(item.id, threadId, str(item.status));
        // The receipt: the steer's user message, `clientId` echoing the command id (observed ~40 ms before the request).
        const m = userMessageOf(p);
        if (threadId === undefined || m?.clientId === undefined || !sent.delete(m.clientId)) return;
        fact({ kind: 'delivered', session: threadId, at: Date.now(), commandId: m.clientId, ref: m.turnId ?? '' });
        return;
      }
      case 'thread/closed':
        if (threadId !== undefined) announced.delete(threadId);
        if (threadId === undefined || !threads.delete(threadId)) return;
        fact({ kind: 'detached', session: threadId, at: Date.now(), detail: 'the thread was closed' });
        return;
    }
  }

  /** A turn starts: what runs under the server now is not the turn's (read only where a stop may ask). */
  function turnStarts(threadId: string): void {
    const now = pidsUnder(serverPid());
    if (now === undefined) baseline.delete(threadId);
    else baseline.set(threadId, now);
  }

  /** A turn's end, with the shell commands it never finished when it was interrupted. */
  function turnEnded(threadId: string, base: Extract<LaneFact, { kind: 'turn.ended' }>): void {
    const open: string[] = [];
    for (const [k, cmd] of commands) {
      if (!k.startsWith(`${threadId}/`)) continue;
      open.push(cmd);
      commands.delete(k);
    }
    const kill = killing.delete(threadId);
    const before = baseline.get(threadId);
    baseline.delete(threadId);
    if (base.interrupted) interruptedEnd(base, open, before, kill);
    else fact(base);
  }

  function lost(why: string): void {
    rpc = undefined;
    opening = undefined;
    threads.clear();
    announced.clear();
    asked.clear();
    items.clear();
    settledAt.clear();
    sent.clear();
    commands.clear();
    killing.clear();
    baseline.clear();
    if (!closing) fact({ kind: 'lost', at: Date.now(), detail: why });
  }

  async function connect(): Promise<RpcClient> {
    const c = await connectRpc(opts.socketPath, onNotification, onRequest);
    await c.call('initialize', { clientInfo: { name: 'aep-steer', version: '1' } });
    c.notify('initialized');
    rpc = c;
    void c.closed.then((why) => {
      if (rpc === c) lost(`the app-server connection closed: ${why}`);
    });
    // Threads already running on a reused server are followed too.
    const loaded = (await c.call('thread/loaded/list', {}).catch(() => ({ data: [] }))) as { data?: string[] };
    for (const id of loaded.data ?? []) void follow(id);
    return c;
  }

  async function start(): Promise<RpcClient> {
    // A server this adapter started before (or another run left) is reused when it answers.
    if (existsSync(opts.socketPath)) {
      try {
        return await connect();
      } catch (err) {
        if (opts.attachOnly === true) throw err;
        rmSync(opts.socketPath, { force: true });
      }
    }
    if (opts.attachOnly === true) throw new Error(`no Codex app-server listens on ${opts.socketPath}`);
    mkdirSync(dirname(opts.socketPath), { recursive: true, mode: 0o700 });
    chmodSync(dirname(opts.socketPath), 0o700);
    const c = spawn(opts.bin, ['app-server', '--listen', address], {
      env: opts.env ?? process.env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child = c;
    let stderr = '';
    c.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
    const exited = new Promise<string>((r) =>
      c.on('exit', (code, signal) => r(`the app-server exited (${signal ?? code})`)),
    );
    void exited.then((why) => {
      if (child === c) child = undefined;
      if (rpc !== undefined) lost(why);
    });
    let failed: string | undefined;
    c.on('error', (err) => (failed = `cannot run ${opts.bin}: ${err.message} (set AEP_CODEX_BIN)`));
    const until = Date.now() + (opts.startMs ?? 15_000);
    while (!existsSync(opts.socketPath)) {
      if (failed !== undefined) throw new Error(failed);
      if (c.exitCode !== null || Date.now() > until)
        throw new Error(`the Codex app-server did not start: ${stderr.trim().split('\n').pop() ?? 'no output'}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    chmodSync(opts.socketPath, 0o600);
    return connect();
  }

  const ready = (): Promise<RpcClient> => {
    if (rpc !== undefined) return Promise.resolve(rpc);
    opening ??= start().catch((err: unknown) => {
      opening = undefined;
      throw err;
    });
    return opening;
  };

  return {
    ...APP_SERVER_LANE,
    facts$: facts$.asObservable(),
    async open() {
      await ready();
      return { address, pid: child?.pid ?? null };
    },
    reaches: (session) => rpc !== undefined && threads.has(session),
    async steer(req: LaneRequest): Promise<LaneOutcome> {
      const c = rpc;
      const turn = threads.get(req.session)?.turn;
      if (c === undefined || !threads.has(req.session))
        return { ok: false, reason: 'unreachable', detail: 'the app-server does not reach this session' };
      if (turn === undefined) return { ok: false, reason: 'idle', detail: 'no turn is running' };
      sent.add(req.commandId);
      try {
        const r = (await c.call('turn/steer', {
          threadId: req.session,
          input: [{ type: 'text', text: req.text }],
          expectedTurnId: turn,
          clientUserMessageId: req.commandId,
        })) as { turnId?: string };
        return { ok: true, ...(typeof r.turnId === 'string' ? { ref: r.turnId } : {}) };
      } catch (err) {
        sent.delete(req.commandId);
        if (err instanceof RpcFailure) {
          const known = STEER_REFUSALS.find((x) => x.match.test(err.message));
          return { ok: false, reason: known?.reason ?? 'refused', detail: err.message };
        }
        return { ok: false, reason: 'unreachable', detail: err instanceof RpcUnreachable ? err.message : String(err) };
      }
    },
    async interrupt(session, o) {
      const c = rpc;
      const turn = threads.get(session)?.turn;
      if (c === undefined || turn === undefined) return { ok: false, detail: 'no turn is running on the app-server' };
      // Set before the call: the turn's end may come before its answer.
      if (o?.killTools === true) killing.add(session);
      try {
        await c.call('turn/interrupt', { threadId: session, turnId: turn });
        return { ok: true };
      } catch (err) {
        killing.delete(session);
        return { ok: false, detail: String(err) };
      }
    },
    async answer(_session, approvalId, approved) {
      const a = asked.get(approvalId);
      if (rpc === undefined || a === undefined) return { ok: false, detail: 'the app-server no longer asks this' };
      a.ours = true;
      rpc.respond(a.id, { decision: approved ? 'accept' : DENY });
      return { ok: true };
    },
    async close() {
      closing = true;
      rpc?.close();
      rpc = undefined;
      const c = child;
      child = undefined;
      // A server this adapter did not start (reused) is left running.
      if (c === undefined) {
        facts$.complete();
        return;
      }
      if (c.exitCode === null) {
        c.kill('SIGTERM');
        await new Promise((r) => {
          const t = setTimeout(() => {
            c.kill('SIGKILL');
            r(undefined);
          }, 3000);
          c.on('exit', () => {
            clearTimeout(t);
            r(undefined);
          });
        });
      }
      rmSync(opts.socketPath, { force: true });
      facts$.complete();
    },
  };
}
