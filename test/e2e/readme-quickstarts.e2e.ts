// The README's "Quick starts, per vendor and way in", run as written: for each vendor whose pinned
// CLI is here, its block's lines in order, each by bash in a fresh HOME with a scratch project,
// `aep-steer` (the clone's bin) and the vendor CLI on PATH, free ports in AEP_PORT, AEP_RELAY and
// AEP_HOOK_PORT. The blocks are read from the README's text; what the test does around the lines
// is the person's part, per vendor (the personas below): their own provider set-up pointing the
// CLI at a loopback mock model, a terminal (tmux) for the lines a person types into one (an agent's
// TUI, `terminal 1`, a daemon in the foreground), a prompt typed into the agent whose answer is a
// slow shell call (each call waits on a gate file the test opens one call at a time, so `steer`
// and `cancel` meet a running turn), the session id from `aep-steer sessions --json` for `<id>`.
// Each `aep-steer` line must exit 0; an instruction's text must reach the model; a `cancel` must
// put `run.cancelled` on the stream; after the terminals close and `aep-steer down` (added when
// the block has none) no process of the vendor's binary may run. What a block lacks, as written,
// is a finding that fails its test, never worked around.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startMockAnthropic, toolResultCount, type MockAnthropic } from '../support/mock-anthropic.js';
import { startMockOpenAi, type MockOpenAi } from '../support/mock-openai.js';
import {
  freePort,
  quickStartBlocks,
  QuickStart,
  tmuxHere,
  vendorBin,
  wordsOf,
  type ReadmeBlock,
  type ReadmeLine,
  type VendorCli,
} from '../support/readme-blocks.js';
import { projectRoot } from '../support/shared-dir.js';
import { writeCodexConfig } from '../support/vendor-e2e.js';

const LINE_LIMIT_MS = 150_000;
/** Tool calls a turn offers: more than any block opens. */
const TOOLS = 8;

let openai: MockOpenAi;
let anthropic: MockAnthropic;

// ---- the model's side: a turn whose shell calls wait on a gate --------------------------------

/** The model requests of one mock, as text, and a hold on the next one that matches. */
interface ModelLog {
  texts(): string[];
  hold(match: (text: string) => boolean): { arrived: Promise<unknown>; release(): void };
}
const openaiLog = (): ModelLog => ({
  texts: () => openai.modelRequests().map((r) => r.text),
  hold: (m) => openai.hold((r) => m(r.text)),
});
const anthropicLog = (): ModelLog => ({
  texts: () => anthropic.messages().map((r) => r.raw),
  hold: (m) => anthropic.hold((r) => m(r.raw)),
});

/** How far a turn got: each tool call and each output names `TOOL_RAN_<n>`. */
const toolMarks = (text: string): number => (text.match(/TOOL_RAN_\d+/g) ?? []).length;

/** Polls `probe` until it gives a value; a miss names what never happened and what was seen. */
async function waitFor<T>(what: string, probe: () => T | undefined, limitMs = 60_000, seen?: () => string): Promise<T> {
  const until = Date.now() + limitMs;
  for (;;) {
    const v = probe();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error(`never saw ${what} (${limitMs} ms)${seen ? `:\n${seen()}` : ''}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** A turn the person started: every shell call waits for `gate`, which the test opens one call at a time. */
class Turn {
  constructor(
    readonly gate: string,
    /** Whether a model request belongs to this turn (its prompt is in it). */
    readonly mine: (text: string) => boolean,
    readonly log: ModelLog,
  ) {}

  private reached(): number {
    return Math.max(0, ...this.log.texts().filter(this.mine).map(toolMarks));
  }

  /** Lets the waiting call finish and the next one start, closed again: the turn goes on. */
  async step(): Promise<void> {
    const before = this.reached();
    const next = this.log.hold((t) => this.mine(t) && toolMarks(t) > before);
    writeFileSync(this.gate, '');
    await Promise.race([
      next.arrived,
      new Promise((_, reject) =>
        setTimeout(() => {
          const seen = this.log
            .texts()
            .map(
              (t, i) =>
                `  request ${i}: ${this.mine(t) ? 'of the turn' : 'other'}, ${toolMarks(t)} TOOL_RAN marks, ${t.length} chars`,
            )
            .join('\n');
          reject(
            new Error(
              `the model never got the released call’s output (60 s); it had ${before} marks; requests:\n${seen}`,
            ),
          );
        }, 60_000),
      ),
    ]).finally(() => {
      rmSync(this.gate, { force: true });
      next.release();
    });
  }

  /** Opens the gate for good: the turn runs its calls to the end. */
  /** The turn was stopped (a cancel): later instructions meet no running call of it. */
  over = false;

  finish(): void {
    writeFileSync(this.gate, '');
  }
}

// ---- the person, per vendor --------------------------------------------------------------------

/** One block being played: its machine, what it found, the turn and session it works with. */
interface Play {
  block: ReadmeBlock;
  persona: Persona;
  qs: QuickStart;
  /** What the block, as written, lacks or gets wrong: each fails the test. */
  findings: string[];
  /** What the test did around the lines, or saw, worth saying. */
  notes: string[];
  turn?: Turn;
  session?: string;
  /** Literal ports in the block, mapped to free ones. */
  ports: Map<string, string>;
  /** After a failed line: the block's later lines that end what it started. */
  unreached?: ReadmeLine[];
}

interface Persona {
  /** The block's bold title. */
  match: RegExp;
  /** The vendor CLIs on the person's PATH. */
  vendors: VendorCli[];
  /** The vendor token `aep-steer sessions` names. */
  agent: string;
  /** The person's own provider set-up: files in HOME, variables in their shell. */
  setup(p: Play): void | Promise<void>;
  /** Lines of another block the block's prose says to have run first ("as above"). */
  before?(blocks: ReadmeBlock[]): ReadmeLine[];
  /** The line just typed into the terminal: answers the CLI's start-up questions, starts a slow turn. */
  terminal?(p: Play, line: ReadmeLine): Promise<void>;
  /** No agent was started in a terminal: a client of the vendor's own starts a slow turn. */
  client?(p: Play): Promise<void>;
  /** Before a `respond`: the running turn's next tool call asks first. */
  ask?(p: Play): Promise<void>;
}

type Question = { shows: string; keys: string[]; finding?: string; note?: string };

/**
 * Types `text` into the terminal and, once the terminal shows it (keys sent together read as a
 * paste), presses Enter. A question the CLI puts up first is answered, and the text typed again.
 */
async function typeLine(p: Play, text: string, questions: Question[] = []): Promise<void> {
  const tui = p.qs.terminal();
  // What must show: the text's tail (a TUI wraps or scrolls a long line, and a key may go to a question).
  const tail = text.trim().slice(-24);
  let typedAt = 0;
  await waitFor(
    `the terminal to show the typed "${text}"`,
    () => {
      const screen = tui.screen().replace(/\s*\n\s*/g, ' ');
      const q = questions.find((x) => screen.includes(x.shows));
      if (q !== undefined) {
        if (q.note !== undefined && !p.notes.includes(q.note)) p.notes.push(q.note);
        tui.keys(...q.keys);
        typedAt = 0;
        return undefined;
      }
      if (screen.includes(tail)) return true;
      if (Date.now() - typedAt > 15_000) {
        tui.keys('-l', text);
        typedAt = Date.now();
      }
      return undefined;
    },
    60_000,
    () => tui.screen(),
  );
  tui.keys('Enter');
}

/** The person types a prompt whose answer is a run of slow shell calls; resolves once the first one runs. */
async function typedTurn(p: Play, tag: string, questions: Question[] = []): Promise<void> {
  const gate = join(p.qs.root, `${tag}.gate`);
  p.turn = new Turn(gate, (t) => t.includes(tag), openaiLog());
  const text = `Now: [[TURN]] [[TOOLS:${TOOLS}]] [[WAITFILE:${gate}]] ${tag} run the slow command`;
  await typeLine(p, text, questions);
  // A busy TUI may drop the Enter: while the prompt still stands in its input and no request of
  // the turn reached the model, the person presses Enter again.
  const tui = p.qs.terminal();
  let pressedAt = Date.now();
  await waitFor(
    'the typed prompt to reach the model',
    () => {
      if (p.turn!.log.texts().some((t) => t.includes(tag))) return true;
      const standing = tui
        .screen()
        .replace(/\s*\n\s*/g, ' ')
        .includes(text.slice(-24));
      if (standing && Date.now() - pressedAt > 10_000) {
        tui.keys('Enter');
        pressedAt = Date.now();
      }
      return undefined;
    },
    90_000,
    () => tui.screen(),
  );
  await toolRuns(p);
}

/** Resolves once a shell call of the turn runs, waiting on its gate. */
async function toolRuns(p: Play): Promise<void> {
  const gate = p.turn!.gate;
  await waitFor(
    'a shell call of the turn waiting on its gate',
    () => (p.qs.processes().some((x) => x.argv.some((a) => a.includes(gate))) ? true : undefined),
    90_000,
    () => `the terminal shows:\n${p.qs.terminal().screen()}`,
  );
}

/**
 * Waits for the terminal to show `ready`, answering the CLI's own start-up questions as a person
 * would; a question that is a finding is recorded as one.
 */
async function untilReady(p: Play, ready: string, questions: Question[], limitMs = 120_000): Promise<void> {
  const tui = p.qs.terminal();
  /** When each question was last answered: one still showing 3 s later is answered again. */
  const answered = new Map<string, number>();
  await waitFor(
    `the terminal to show "${ready}"`,
    () => {
      const screen = tui.screen();
      const q = questions.find((x) => screen.includes(x.shows));
      if (q !== undefined) {
        const at = answered.get(q.shows);
        if (at === undefined || Date.now() - at > 3000) {
          if (at === undefined && q.finding !== undefined) p.findings.push(q.finding);
          if (at === undefined && q.note !== undefined) p.notes.push(q.note);
          answered.set(q.shows, Date.now());
          tui.keys(...q.keys);
        }
        return undefined;
      }
      return screen.includes(ready) ? true : undefined;
    },
    limitMs,
    () => `it shows:\n${tui.screen()}`,
  );
}

const writeJson = (file: string, value: unknown): void => {
  mkdirSync(join(file, '..'), { recursive: true });
  writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`);
};

/** Qwen Code reads the person's key and endpoint from their shell, and their choices from ~/.qwen/settings.json. */
function qwenPerson(p: Play): void {
  Object.assign(p.qs.env, {
    OPENAI_API_KEY: 'dummy',
    OPENAI_BASE_URL: openai.baseUrl,
    OPENAI_MODEL: 'mock-model',
    NO_UPDATE_NOTIFIER: '1',
    DO_NOT_TRACK: '1',
    QWEN_CODE_DISABLE_TELEMETRY: '1',
    QWEN_CODE_SUPPRESS_YOLO_WARNING: '1',
  });
  writeJson(join(p.qs.home, '.qwen', 'settings.json'), {
    security: { auth: { selectedType: 'openai' } },
    model: { name: 'mock-model' },
    // The person lets it run shell commands without asking (as the Codex config below does).
    tools: { approvalMode: 'yolo' },
    telemetry: { enabled: false },
    privacy: { usageStatisticsEnabled: false },
    general: { disableAutoUpdate: true, disableUpdateNag: true },
    ide: { enabled: false },
  });
}

/** Codex: the mock as the person's model provider in ~/.codex/config.toml, the key in their shell. */
function codexPerson(p: Play): void {
  const ws = { root: p.qs.root, home: p.qs.home, project: p.qs.project };
  writeCodexConfig(ws, openai.baseUrl);
  // The shared writer also trusts the project; a person's first `codex` in a new folder has not.
  const config = join(p.qs.home, '.codex', 'config.toml');
  writeFileSync(
    config,
    readFileSync(config, 'utf8').replace(/\n\[projects\."[^"]*"\]\ntrust_level = "trusted"\n/, '\n'),
  );
  Object.assign(p.qs.env, {
    MOCK_API_KEY: 'dummy',
    OPENAI_API_KEY: 'dummy',
    NO_UPDATE_NOTIFIER: '1',
    CODEX_DISABLE_TELEMETRY: '1',
    DO_NOT_TRACK: '1',
  });
}

// The composer shows "Ask Codex to do anything" while the TUI still connects; the footer names the
// model once it is ready (a folder question may come up before that).
const CODEX_READY = 'mock-model default';
const codexQuestions: Question[] = [
  { shows: 'Trust this folder?', keys: ['Enter'], note: 'answered Codex’s "Trust this folder?"' },
];

const personas: Persona[] = [
  {
    match: /^Claude Code, a headless session on the stream-json lane/,
    vendors: ['claude-code'],
    agent: 'claude-code',
    setup(p) {
      Object.assign(p.qs.env, {
        ANTHROPIC_API_KEY: 'sk-ant-test',
        ANTHROPIC_BASE_URL: anthropic.url,
        ANTHROPIC_MODEL: 'claude-sonnet-4-5',
        DISABLE_TELEMETRY: '1',
        DISABLE_AUTOUPDATER: '1',
        DISABLE_ERROR_REPORTING: '1',
        DISABLE_BUG_COMMAND: '1',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      });
      // The person lets Claude Code run Bash without asking (a headless run cannot ask).
      writeJson(join(p.qs.home, '.claude', 'settings.json'), { permissions: { allow: ['Bash'] } });
      claudeGate = join(p.qs.root, 'claude.gate');
    },
    async terminal(p, line) {
      // The prompt is the line's own (`-p "…"`): the mock answers it with the slow calls.
      const prompt = /-p\s+"([^"]*)"/.exec(line.command)?.[1];
      if (prompt === undefined) throw new Error(`\`${line.raw}\`: no -p "<prompt>" to run`);
      p.turn = new Turn(claudeGate!, (t) => t.includes(prompt), anthropicLog());
      await toolRuns(p);
    },
  },
  {
    match: /^Codex, hooks/,
    vendors: ['codex'],
    agent: 'codex',
    setup: codexPerson,
    async terminal(p) {
      await untilReady(p, CODEX_READY, [
        ...codexQuestions,
        {
          shows: 'Hooks need review',
          keys: ['2', 'Enter'],
          finding:
            'Codex showed "Hooks need review" at start: `aep-steer install codex --project .` did not trust the hooks it wrote (Codex does not list the hooks of a folder it does not trust yet), so a person must trust them in the TUI (answered "Trust all and continue" to go on)',
        },
      ]);
      await typedTurn(p, 'qs-codex-hooks');
    },
  },
  {
    match: /^Codex, the app-server lane/,
    vendors: ['codex'],
    agent: 'codex',
    setup: codexPerson,
    async terminal(p) {
      await untilReady(p, CODEX_READY, codexQuestions);
      await typedTurn(p, 'qs-codex-app');
    },
  },
  {
    match: /^Qwen Code, hooks/,
    vendors: ['qwen-code'],
    agent: 'qwen-code',
    setup: qwenPerson,
    async terminal(p) {
      await untilReady(p, 'Type your message', []);
      await typedTurn(p, 'qs-qwen-hooks');
    },
  },
  {
    match: /^Qwen Code, the serve lane/,
    vendors: ['qwen-code'],
    agent: 'qwen-code',
    setup: qwenPerson,
    async terminal(p, line) {
      // `aep-steer run qwen "…"` in terminal 1: ready once it names its session; every line typed
      // there is a prompt, so the person's next one is a slow turn.
      if (!/\baep-steer run qwen\b/.test(line.command)) return;
      await untilReady(p, 'each line is a prompt', []);
      await typedTurn(p, 'qs-qwen-serve');
    },
  },
  {
    match: /^Cline, hooks and the hub/,
    vendors: ['cline'],
    agent: 'cline',
    async setup(p) {
      Object.assign(p.qs.env, {
        CLINE_HUB_PORT: String(await freePort()),
        CLINE_NO_AUTO_UPDATE: '1',
        OPENAI_API_KEY: 'dummy',
        NO_UPDATE_NOTIFIER: '1',
        DO_NOT_TRACK: '1',
      });
      // The person's provider, set once with Cline's own command.
      const auth = await p.qs.run(
        `cline auth -p openai-compatible -k dummy -b ${openai.baseUrl} -m mock-model`,
        LINE_LIMIT_MS,
      );
      assert.is(auth.code, 0, `cline auth: ${auth.out}`);
    },
    async terminal(p) {
      // Cline 3.0.65 may put up an offer on start ("Press Enter to open, any other key to close").
      const offer: Question[] = [
        { shows: 'any other key to close', keys: ['Escape'], note: 'closed Cline’s start-up offer' },
      ];
      await untilReady(p, 'What can I do for you?', offer);
      // As the README says: the hub starts with the first `cline`, and the adapter's log says when it joined it.
      await waitFor(
        'the adapter to join the Cline hub',
        () => (p.qs.logTails(200).includes('Cline hub: connected to') ? true : undefined),
        120_000,
        () => p.qs.logTails(),
      );
      await typedTurn(p, 'qs-cline', offer);
    },
    async ask(p) {
      // The person turns auto-approve off; the turn's next command then asks.
      const tui = p.qs.terminal();
      tui.keys('BTab');
      await waitFor(
        'auto-approve off',
        () => (tui.screen().includes('Auto-approve all enabled') ? undefined : true),
        20_000,
        () => tui.screen(),
      );
      await p.turn!.step();
    },
  },
];

/** The gate the Claude Code mock's shell calls wait on (the prompt is the README's, with no marker). */
let claudeGate: string | undefined;

// ---- playing a block ---------------------------------------------------------------------------

/** The block's line with `<id>` and the literal ports put as the person's machine has them. */
function substitute(p: Play, command: string): string {
  let c = command;
  for (const [from, to] of p.ports) c = c.replace(new RegExp(`\\b${from}\\b`, 'g'), to);
  return p.session === undefined ? c : c.replaceAll('<id>', p.session);
}

/** The aep-steer verb of a line, or undefined. */
const verbOf = (command: string): string | undefined => {
  const w = wordsOf(command);
  return w[0] === 'aep-steer' ? (w[1] ?? '') : undefined;
};

/** A line a person types into a terminal of its own: `terminal 1`, an agent's TUI, a daemon in the foreground. */
function inTerminal(p: Play, line: ReadmeLine): boolean {
  if (line.background) return false;
  if (/terminal 1/.test(line.comment)) return true;
  const w = wordsOf(line.command);
  const clis = p.persona.vendors.map((v) => vendorBin(v).split('/').pop()!);
  // The agent itself (the binary, perhaps with options) opens its TUI; a subcommand
  // (`cline hub stop`, `codex app-server daemon stop`, `cline auth`) runs and returns.
  if (w[0] !== undefined && clis.includes(w[0]))
    return !w.includes('-p') && (w[1] === undefined || w[1].startsWith('-'));
  return w[0] === 'aep-steer' && ['adapter', 'relay', 'run', 'console', 'mcp'].includes(w[1] ?? '');
}

/** The session the person would pick in `aep-steer sessions --json`: the vendor's live one. */
async function sessionId(p: Play): Promise<string> {
  let last = '';
  const until = Date.now() + 60_000;
  while (Date.now() < until) {
    const r = await p.qs.run('aep-steer sessions --json', 30_000);
    last = r.out;
    try {
      const rows = JSON.parse(r.out) as { session: string; agent?: string; state: string; lastEventAt?: string }[];
      const live = rows
        .filter((x) => x.agent === p.persona.agent && x.state === 'live')
        .sort((a, b) => String(b.lastEventAt).localeCompare(String(a.lastEventAt)));
      if (live[0] !== undefined) return live[0].session;
    } catch {
      // not JSON yet: said below if it stays so
    }
  }
  throw new Error(
    `no live ${p.persona.agent} session in \`aep-steer sessions --json\` while the agent's turn ran a tool, so <id> has no value; it printed:\n${last}`,
  );
}

/** The instruction text of an `instruct` line: its last quoted word. */
const instructionOf = (command: string): string =>
  (
    wordsOf(command)
      .filter((w) => w.startsWith('"'))
      .at(-1) ?? '""'
  ).slice(1, -1);

async function playLine(p: Play, line: ReadmeLine): Promise<void> {
  const qs = p.qs;
  if (line.command.includes('<id>') && p.session === undefined) {
    if (p.turn === undefined) {
      if (p.persona.client === undefined) throw new Error(`\`${line.raw}\`: no agent was started before it`);
      await p.persona.client(p);
    }
    p.session = await sessionId(p);
  }
  const command = substitute(p, line.command);
  const verb = verbOf(command);
  if (inTerminal(p, line)) {
    await typeLine(p, substitute(p, line.raw));
    await p.persona.terminal?.(p, line);
    return;
  }
  if (line.background) {
    const h = qs.start(command.replace(/&$/, '').trim());
    // A person waits for the daemon to say it serves before the next line.
    await h.until(/listening on|hooks on|serving/i, LINE_LIMIT_MS);
    return;
  }
  if (verb === 'instruct') {
    const h = qs.start(command);
    const said = await h.until(/✓ accepted|✗/, LINE_LIMIT_MS).catch(async () => (await h.done).out);
    if (/✓ accepted/.test(said) && p.turn !== undefined && !p.turn.over) {
      // Waiting for the next turn: the person lets the running one end. Else the running call ends.
      if (/next turn starts/.test(h.output())) p.turn.finish();
      else await p.turn.step();
    }
    const r = await h.done;
    if (r.code !== 0) throw new Error(`\`${line.raw}\` exited ${String(r.code)}, not 0:\n${r.out}`);
    const text = instructionOf(command);
    await waitFor(`the instruction "${text}" in a model request`, () =>
      (p.turn?.log ?? openaiLog()).texts().some((t) => t.includes(text)) ? true : undefined,
    );
    return;
  }
  if (verb === 'respond') {
    await p.persona.ask?.(p);
    const pend = await waitForPending(p);
    if (!pend) p.findings.push(`\`${line.raw}\`: nothing was pending for it to answer`);
  }
  // A cancel meets the turn while it runs its slow command, as the person sees it running.
  if (verb === 'cancel' && p.turn !== undefined && !p.turn.over) await toolRuns(p);
  const r = await qs.run(command, LINE_LIMIT_MS);
  if (r.code !== 0) throw new Error(`\`${line.raw}\` exited ${String(r.code)}, not 0:\n${r.out}`);
  if (verb === 'respond' && p.turn !== undefined) await toolRuns(p);
  if (verb === 'cancel') {
    const w = await qs.run(
      `aep-steer watch --json --replay --session ${p.session} --filter '{"type":"run.cancelled"}' --limit 1`,
      30_000,
    );
    if (!w.out.includes('"run.cancelled"'))
      throw new Error(`\`${line.raw}\` exited 0 but the stream has no run.cancelled for ${p.session}:\n${w.out}`);
    if (p.turn !== undefined) {
      p.turn.over = true;
      p.turn.finish();
    }
  }
}

/** Polls `aep-steer pending` until the session has a request waiting (true), or gives up (false). */
async function waitForPending(p: Play): Promise<boolean> {
  const until = Date.now() + 60_000;
  while (Date.now() < until) {
    const r = await p.qs.run(`aep-steer pending --session ${p.session} --json`, 30_000);
    try {
      if (((JSON.parse(r.out) as { requests?: unknown[] }).requests ?? []).length > 0) return true;
    } catch {
      // said by the caller
    }
  }
  return false;
}

/** The person closes the terminals and stops what `up` started; nothing of the vendor's binary may run. */
async function windDown(p: Play): Promise<void> {
  const qs = p.qs;
  qs.closeTerminal();
  if (!p.block.lines.some((l) => /^aep-steer down\b/.test(l.command))) {
    p.notes.push('the block has no `aep-steer down`: the test ran it after the last line');
    const down = await qs.run('aep-steer down', LINE_LIMIT_MS);
    if (down.code !== 0) p.findings.push(`\`aep-steer down\` exited ${String(down.code)}:\n${down.out}`);
  }
  for (const v of p.persona.vendors) {
    const left = await waitFor(
      `no ${v} process left`,
      () => (qs.vendorProcesses(v).length === 0 ? [] : undefined),
      20_000,
    ).catch(() => qs.vendorProcesses(v));
    if (left.length > 0)
      p.findings.push(
        `after the terminals closed and \`aep-steer down\`, ${v} still runs: ${left.map((x) => `pid ${x.pid} ${x.argv.join(' ')}`).join('; ')}`,
      );
  }
  const others = qs
    .processes()
    .filter((x) => !p.persona.vendors.some((v) => qs.vendorProcesses(v).some((y) => y.pid === x.pid)));
  if (others.length > 0)
    p.notes.push(`also still running under the HOME: ${others.map((x) => x.argv.join(' ')).join('; ')}`);
}

async function playBlock(block: ReadmeBlock, persona: Persona, blocks: ReadmeBlock[]): Promise<void> {
  const slug = persona.agent + (/serve|app-server|stream-json/.exec(block.title)?.[0] ?? '');
  const qs = await QuickStart.create(slug, persona.vendors);
  const p: Play = { block, persona, qs, findings: [], notes: [], ports: new Map() };
  // Literal ports in the block (a daemon's --port, its URL) move to free ones, the same number to the same port.
  for (const l of block.lines)
    for (const m of l.command.matchAll(/(?:--port\s+|127\.0\.0\.1:)(\d{4,5})\b/g))
      if (!p.ports.has(m[1]!)) p.ports.set(m[1]!, String(await freePort()));
  if (p.ports.size > 0)
    p.notes.push(`literal ports moved to free ones: ${[...p.ports].map(([a, b]) => `${a}→${b}`).join(', ')}`);
  let failure: Error | undefined;
  try {
    await persona.setup(p);
    const lines = [...(persona.before?.(blocks) ?? []), ...block.lines];
    for (const [i, line] of lines.entries()) {
      try {
        await playLine(p, line);
      } catch (err) {
        failure = new Error(`${(err as Error).message}`);
        // What the person runs to end what they started still runs, so the failure leaves nothing behind.
        p.unreached = lines.slice(i + 1).filter((l) => /^aep-steer down\b|\bstop\b/.test(l.command));
        break;
      }
    }
  } finally {
    for (const line of p.unreached ?? []) await p.qs.run(substitute(p, line.command), LINE_LIMIT_MS);
    await windDown(p).catch((err: Error) => p.findings.push(`winding down: ${err.message}`));
    const report = [
      `${block.title}:`,
      ...p.notes.map((n) => `  note: ${n}`),
      ...p.findings.map((f) => `  FINDING: ${f}`),
      ...(failure === undefined ? [] : [`  FAILED: ${failure.message}`]),
    ].join('\n');
    console.log(report);
    const transcript = `${qs.transcript.join('\n')}\n${qs.logTails()}`;
    await qs.close();
    claudeGate = undefined;
    if (failure !== undefined || p.findings.length > 0)
      assert.unreachable(`${report}\n--- what the lines printed\n${transcript}`);
  }
}

// ---- the tests ---------------------------------------------------------------------------------

const readme = readFileSync(join(projectRoot, 'README.md'), 'utf8');
const blocks = quickStartBlocks(readme);

test('every persona finds its block in the README', () => {
  for (const persona of personas)
    assert.ok(
      blocks.some((b) => persona.match.test(b.title)),
      `no block titled ${String(persona.match)} under "Quick starts, per vendor and way in"`,
    );
});

test.before(async () => {
  openai = await startMockOpenAi();
  anthropic = await startMockAnthropic();
  // The README's prompt carries no marker: every main-thread request of the session gets the next
  // shell call, which waits on the current gate, until the turn's calls are done.
  anthropic.setScript((body) => {
    if (!(body.tools ?? []).some((t) => t.name === 'Bash') || claudeGate === undefined)
      return { content: [{ type: 'text', text: 'ok' }] };
    const n = toolResultCount(body);
    if (n >= TOOLS) return { content: [{ type: 'text', text: `Done after ${n} tool results.` }] };
    const cmd = `while [ ! -e '${claudeGate}' ]; do sleep 0.05; done; echo TOOL_RAN_${n}`;
    return { content: [{ type: 'tool_use', name: 'Bash', input: { command: cmd, description: 'wait for the gate' } }] };
  });
});

test.after(async () => {
  await openai?.close();
  await anthropic?.close();
});

const skipMissing = process.env.CI !== 'true' && process.env.AEP_SKIP_VENDOR_E2E === '1';
for (const block of blocks) {
  const persona = personas.find((x) => x.match.test(block.title));
  if (persona === undefined) {
    console.log(`not run: "${block.title}" (its CLI is not among the pinned ones in .vendor-clis)`);
    continue;
  }
  const missing = persona.vendors.filter((v) => !existsSync(vendorBin(v)));
  if (missing.length > 0 || !tmuxHere()) {
    const why = `${missing.map((v) => `${v} is not installed in .vendor-clis (scripts/install-vendor-cli.sh ${v})`).join('; ') || 'tmux is missing'}`;
    if (skipMissing) console.log(`not run (AEP_SKIP_VENDOR_E2E=1): "${block.title}": ${why}`);
    else test(`${block.title}: its CLI and tmux are here`, () => assert.unreachable(why));
    continue;
  }
  if (process.env.QS_ONLY !== undefined && !block.title.includes(process.env.QS_ONLY)) continue;
  test(`README quick start "${block.title}" runs as written`, () => playBlock(block, persona, blocks));
}

test.run();
