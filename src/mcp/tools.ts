// The steering tools an orchestrating agent calls (issue: MCP server). Each tool reads the live
// board (the relay stream folded as the audit folds it, plus the roster) or sends through the one
// consumer core; nothing here talks to an adapter directly, and the server never sees more than
// its relay token allows (D19–D20).
import { z } from 'zod';
import type { McpServer } from '@modelcontextprotocol/server';
import { CAPTURE_LEVELS, type AepEvent } from '../protocol/envelope.js';
import type { Board, BoardSession } from '../consumer/board.js';
import type { RelayConsumer } from '../consumer/connection.js';
import { FrameError } from '../protocol/errors.js';
import { sessionHistory } from '../consumer/history.js';
import { commandIdFor } from '../consumer/verb.js';
import { sendCancel } from '../consumer/cancel.js';
import { sendInput } from '../consumer/send-input.js';
import { sendInstruction } from '../consumer/instruct.js';
import { sendResponse, type Answer } from '../consumer/respond.js';
import { sendWithdraw } from '../consumer/withdraw.js';
import {
  explainCancel,
  explainRespond,
  explainSteer,
  explainWithdraw,
  refusal as refused,
  result as explained,
  type Explained,
} from '../consumer/explain.js';
import { MCP_VOICE } from '../consumer/next-step.js';
import { DELIVERIES } from '../protocol/payloads.js';

export interface ToolResult {
  [k: string]: unknown;
  content: { type: 'text'; text: string }[];
  structuredContent: Record<string, unknown>;
  isError?: boolean;
}

/**
 * The sentence also leads the structured content: some hosts (Claude Code 2.1.332) hand the
 * model only `structuredContent` when it is present, and the sentence is what says what to do.
 */
const tool = (x: Explained): ToolResult => ({
  content: [{ type: 'text', text: x.text }],
  structuredContent: { message: x.text, ...x.facts },
  ...(x.isError ? { isError: true } : {}),
});
const result = (text: string, facts: Record<string, unknown>, isError = false): ToolResult =>
  tool(explained(text, facts, isError));
const refusal = (code: string, sentence: string, facts: Record<string, unknown> = {}): ToolResult =>
  tool(refused(code, sentence, facts));
const steerResult = (o: Parameters<typeof explainSteer>[0], opts: { key?: string; waitMs: number; noun: string }) =>
  tool(explainSteer(o, { ...opts, voice: MCP_VOICE }));
const respondResult = (o: Parameters<typeof explainRespond>[0]): ToolResult => tool(explainRespond(o, MCP_VOICE));

export interface ToolContext {
  board: Board;
  /** The open relay connection; undefined while the relay is unreachable. */
  consumer(): RelayConsumer | undefined;
  sender: string;
  relayUrl: string;
  /** Default and cap of `wait_ms`. */
  waitMs: number;
  maxWaitMs: number;
}

const MAX_EVENTS = 500;
/** The relay's refusal of a subscription beyond its per-connection limit: it passes. */
const CAPACITY = 'limit-exceeded';

const steeringVerbs = (s: BoardSession): string[] =>
  (s.accepts ?? []).filter(
    (t) => /\.control\.(instruct|send_input)$/.test(t) || t === 'control.attention.respond' || t === 'control.cancel',
  );

function sessionRow(s: BoardSession): Record<string, unknown> {
  return {
    session: s.session,
    vendor: s.agent ?? null,
    state: s.state,
    ...(s.stale === true ? { stale: true } : {}),
    ...(s.cwd === undefined ? {} : { cwd: s.cwd }),
    ...(s.title === undefined ? {} : { title: s.title }),
    live: s.claimants === 1,
    ...(s.claimants > 1 ? { claimants: s.claimants } : {}),
    steering: steeringVerbs(s),
    queue_length: s.relayQueued ?? s.queue.length,
    pending_requests: s.holds.length,
    last_activity: s.updatedAt,
  };
}

function eventRow(e: AepEvent): Record<string, unknown> {
  const r: Record<string, unknown> = { id: e.id, time: e.time, type: e.type };
  for (const k of ['seq', 'cause', 'subject', 'capture'] as const) if (e[k] !== undefined) r[k] = e[k];
  if (e.data !== undefined) r['data'] = e.data;
  return r;
}

/** Tracks which text each idempotency key was first used with: a key names one instruction. */
class KeyLedger {
  private readonly texts = new Map<string, string>();
  check(id: string, text: string): boolean {
    const first = this.texts.get(id);
    if (first === undefined) this.texts.set(id, text);
    return first === undefined || first === text;
  }
}

const unreachable = (ctx: ToolContext): ToolResult =>
  result(
    `Relay unreachable at ${ctx.relayUrl}${ctx.board.error ? ` (${ctx.board.error})` : ''}; the server keeps retrying; ${MCP_VOICE.relayDown}.`,
    { outcome: 'unreachable', relay: ctx.relayUrl },
    true,
  );

export function registerSteeringTools(server: McpServer, ctx: ToolContext): void {
  const ledger = new KeyLedger();
  const waitOf = (ms: number | undefined) => Math.min(ms ?? ctx.waitMs, ctx.maxWaitMs);
  const withConsumer = async (run: (c: RelayConsumer) => Promise<ToolResult>): Promise<ToolResult> => {
    const c = ctx.consumer();
    if (c === undefined) return unreachable(ctx);
    try {
      return await run(c);
    } catch (err) {
      if (err instanceof FrameError && err.code === CAPACITY) {
        return refusal(
          err.code,
          `the relay connection is at capacity (${err.message}); retry the same call in a moment (with the same idempotency_key, if you gave one).`,
          { retryable: true },
        );
      }
      if (err instanceof FrameError)
        return refusal(err.code, `the relay refused the request: ${err.message}.`, { retryable: false });
      return result(
        `Relay connection failed: ${(err as Error).message}. Try again; the server reconnects by itself.`,
        { outcome: 'unreachable', detail: (err as Error).message },
        true,
      );
    }
  };

  server.registerTool(
    'list_sessions',
    {
      title: 'List agent sessions',
      description:
        'Lists the coding-agent sessions this relay knows, newest activity first: session id, vendor (claude-code, codex, cline, openhands…), ' +
        'machine state (idle, queued, holding.permission, holding.elicitation, ended), whether an adapter is live for it, the steering verbs it ' +
        'declares (x.<vendor>.control.instruct → use instruct; x.<vendor>.control.send_input → use send_input; control.attention.respond → use respond; control.cancel → use cancel), ' +
        "how many instructions are queued, how many permission/form requests wait for an answer, the last activity time (the agent's own events only), " +
        "stale: true when a live session's agent has been silent past its vendor's stale window (its terminal may be gone), its working directory (cwd) " +
        'and a title (the first line of its first prompt, when the relay token may see redacted text). ' +
        'Call it first to find the session id to steer. It lists what the relay has received: a session whose agent started a moment ago ' +
        "appears once its adapter's first event reaches the relay, so call it again if one you just started is missing.",
      inputSchema: z.object({
        include_ended: z
          .boolean()
          .optional()
          .describe('Also list sessions that are not live (ended, or their adapter is gone). Default false.'),
      }),
      annotations: { readOnlyHint: true },
    },
    async ({ include_ended }) =>
      withConsumer(async (c) => {
        // Claims change without an event (an adapter connects or drops): read the roster now.
        ctx.board.setRoster(await c.roster());
        const all = ctx.board.snapshot().sessions;
        const rows = all
          .filter((s) => include_ended === true || (s.claimants > 0 && s.state !== 'ended'))
          .map(sessionRow);
        const text =
          rows.length === 0
            ? `No ${include_ended ? '' : 'live '}sessions on the relay${all.length > 0 && !include_ended ? ` (${all.length} known; include_ended lists them)` : ''}.`
            : rows
                .map(
                  (r) =>
                    `${String(r['session'])} ${String(r['vendor'])} ${String(r['state'])}${r['stale'] ? ' (stale)' : ''}${r['live'] ? '' : ' (not live)'}${r['cwd'] ? ` in ${String(r['cwd'])}` : ''}${r['title'] ? ` "${String(r['title'])}"` : ''} queue ${String(r['queue_length'])} pending ${String(r['pending_requests'])} steering [${(r['steering'] as string[]).join(', ')}] last ${String(r['last_activity'])}`,
                )
                .join('\n');
        return result(text, { sessions: rows });
      }),
  );

  const steerInput = {
    session: z.string().min(1).describe('Target session id, as list_sessions gives it.'),
    text: z
      .string()
      .describe(
        'What the agent should read, phrased as an instruction to it (it arrives as context on its next model request).',
      ),
    idempotency_key: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe(
        'Any string naming this one instruction. The same key (same session) is never delivered twice: a repeated call returns the same outcome, ' +
          'so retry with the same key after a timeout or an error instead of sending a new instruction.',
      ),
    wait_ms: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe(`How long to hold the result waiting for delivery. Default ${ctx.waitMs}, at most ${ctx.maxWaitMs}.`),
  };

  server.registerTool(
    'instruct',
    {
      title: 'Steer an agent session',
      description:
        "Sends an instruction to another coding agent's live session (Claude Code, Codex, Qwen Code, …) through the relay. The adapter queues it and " +
        'hands it to that agent at its next eligible moment (a tool call, a prompt), so its model reads it on its next request; it does not start a ' +
        'turn by itself. The result is held until the stream settles: delivered (after how many ms, at which moment, when), dropped (with the reason, ' +
        'e.g. the session ended), rejected by the adapter (e.g. empty text), refused by the relay or roster (code: no-route, unsupported, unauthorized, ' +
        'ambiguous), or still queued when wait_ms ran out. Give an idempotency_key to make retries safe. delivery chooses when it arrives: ' +
        'moment (default: the next eligible moment), steer (into the turn running now; refused session-idle when none runs), queue (the first ' +
        'moment of the next turn). A session that cannot honour one refuses it with code delivery-unsupported, naming those it takes. ' +
        'The result carries command_id: withdraw takes it back while it still waits.',
      inputSchema: z.object({
        ...steerInput,
        delivery: z
          .enum(DELIVERIES)
          .optional()
          .describe('moment (default), steer (the running turn) or queue (the next turn).'),
      }),
    },
    async (a) => {
      const waitMs = waitOf(a.wait_ms);
      const id = a.idempotency_key === undefined ? undefined : commandIdFor(ctx.sender, a.session, a.idempotency_key);
      if (id !== undefined && !ledger.check(id, `${a.delivery ?? 'moment'}\n${a.text}`)) {
        return refusal(
          'idempotency-conflict',
          `idempotency_key "${a.idempotency_key}" was already used for a different text on session ${a.session}; use a new key for a new instruction.`,
          { session: a.session },
        );
      }
      return withConsumer(async (c) => {
        const o = await sendInstruction(
          c,
          { sender: ctx.sender },
          {
            session: a.session,
            text: a.text,
            timeoutMs: waitMs,
            ...(id ? { id } : {}),
            ...(a.delivery ? { delivery: a.delivery } : {}),
          },
        );
        return steerResult(o, {
          waitMs,
          noun: 'instruction',
          ...(a.idempotency_key ? { key: a.idempotency_key } : {}),
        });
      });
    },
  );

  server.registerTool(
    'withdraw',
    {
      title: 'Take back an instruction that still waits',
      description:
        "Withdraws an instruction this server sent (its command_id from instruct) while it still waits in the session's queue: the agent never " +
        'reads it. Calling it again for the same instruction gives the same answer. Refusals carry a code: already-delivered (the agent has it), ' +
        'not-waiting (withdrawn before, expired, or its turn or session ended), unknown-instruction (the session never accepted that id), ' +
        "not-sender (only its sender may withdraw it, unless granted is set and this server's token is granted withdraw for the session). " +
        'To edit an instruction, withdraw it and send the new text with instruct.',
      inputSchema: z.object({
        session: z.string().min(1).describe('The session the instruction was sent to.'),
        instruction: z.string().min(1).describe("The instruction's command_id, as instruct returned it."),
        granted: z
          .boolean()
          .optional()
          .describe(
            "Withdraw another sender's instruction on this token's withdraw grant; refused unauthorized without one.",
          ),
        wait_ms: z
          .number()
          .int()
          .min(1)
          .optional()
          .describe(`How long to wait for the answer. Default ${Math.min(ctx.waitMs, 30_000)}.`),
      }),
      annotations: { idempotentHint: true },
    },
    async (a) =>
      withConsumer(async (c) => {
        // One command id per (sender, session, instruction): a repeated call is a retry, answered as the first (D4).
        const id = commandIdFor(ctx.sender, a.session, `withdraw${a.granted ? '-granted' : ''}\n${a.instruction}`);
        const o = await sendWithdraw(
          c,
          { sender: ctx.sender },
          {
            session: a.session,
            instruction: a.instruction,
            id,
            timeoutMs: waitOf(a.wait_ms ?? Math.min(ctx.waitMs, 30_000)),
            ...(a.granted ? { granted: true } : {}),
          },
        );
        return tool(explainWithdraw(o, MCP_VOICE));
      }),
  );

  server.registerTool(
    'cancel',
    {
      title: 'Stop the turn a session is running',
      description:
        'Stops the turn an agent session is running now (control.cancel, scope run), where its lane can: a session whose list_sessions ' +
        'steering lists control.cancel (Cline with its hub control on). The result is held until the agent reports the turn stopped ' +
        '(run.cancelled), the adapter rejects it (e.g. no turn is running), the relay or roster refuses it (code unsupported for a session ' +
        'that takes no cancel, no-route, unauthorized), or wait_ms runs out. Queued instructions stay queued; withdraw takes those back.',
      inputSchema: z.object({
        session: z.string().min(1).describe('The session whose running turn to stop.'),
        run: z.string().min(1).optional().describe("The run to stop; the session's running one when absent."),
        kill_tools: z
          .boolean()
          .optional()
          .describe(
            'Also end the shell commands the agent would leave running when its turn stops, where its way in can (the Codex app-server).',
          ),
        wait_ms: z
          .number()
          .int()
          .min(1)
          .optional()
          .describe(`How long to wait for the turn to stop. Default ${Math.min(ctx.waitMs, 30_000)}.`),
      }),
      annotations: { destructiveHint: true },
    },
    async (a) =>
      withConsumer(async (c) => {
        const o = await sendCancel(
          c,
          { sender: ctx.sender },
          {
            session: a.session,
            timeoutMs: waitOf(a.wait_ms ?? Math.min(ctx.waitMs, 30_000)),
            ...(a.run ? { run: a.run } : {}),
            ...(a.kill_tools === true ? { killTools: true } : {}),
          },
        );
        return tool(explainCancel(o, MCP_VOICE));
      }),
  );

  server.registerTool(
    'send_input',
    {
      title: 'Send input to a Cline or OpenHands session',
      description:
        "Sends user input to a session whose adapter drives the agent's own input API (Cline hub sessions: x.cline.control.send_input; OpenHands " +
        'conversations: x.openhands.control.send_input). Use it only for sessions whose list_sessions steering lists a send_input verb; for the ' +
        'others use instruct. Cline refuses input to an idle session (it would start a turn). The result is held until the adapter reports the ' +
        'input sent (x.<vendor>.input.sent), it is rejected, refused, or wait_ms runs out.',
      inputSchema: z.object({
        ...steerInput,
        delivery: z
          .enum(['queue', 'steer'])
          .optional()
          .describe('Cline only: queue (default) waits for the current turn; steer folds it into the running turn.'),
      }),
    },
    async (a) => {
      const waitMs = waitOf(a.wait_ms);
      const id =
        a.idempotency_key === undefined
          ? undefined
          : commandIdFor(ctx.sender, a.session, `input\n${a.idempotency_key}`);
      if (id !== undefined && !ledger.check(id, a.text)) {
        return refusal(
          'idempotency-conflict',
          `idempotency_key "${a.idempotency_key}" was already used for a different text on session ${a.session}; use a new key for new input.`,
          { session: a.session },
        );
      }
      return withConsumer(async (c) => {
        const o = await sendInput(
          c,
          { sender: ctx.sender },
          {
            session: a.session,
            text: a.text,
            timeoutMs: waitMs,
            ...(id ? { id } : {}),
            ...(a.delivery ? { delivery: a.delivery } : {}),
          },
        );
        return steerResult(o, { waitMs, noun: 'input', ...(a.idempotency_key ? { key: a.idempotency_key } : {}) });
      });
    },
  );

  server.registerTool(
    'pending_requests',
    {
      title: 'List permission and form requests waiting for an answer',
      description:
        'Lists the permission requests (a tool the agent wants to run) and form requests (questions, elicitations) that agent sessions are holding ' +
        'open until someone answers, oldest first: session, request id, kind, prompt, the option ids offered and form fields. The prompt says ' +
        "what the tool will do (its command, path or URL) and forms carry their questions and labels when this server's token may read " +
        'redacted text; at metadata only the tool name. Answer one with respond. A request answered or dismissed at the agent itself ' +
        '(in its own dialog, or by Esc) disappears from the list at once.',
      inputSchema: z.object({
        session: z.string().min(1).optional().describe("Only this session's requests."),
      }),
      annotations: { readOnlyHint: true },
    },
    async ({ session }) => {
      if (ctx.consumer() === undefined) return unreachable(ctx);
      const rows = ctx.board
        .snapshot()
        .sessions.filter((s) => session === undefined || s.session === session)
        .flatMap((s) => s.holds.map((h) => ({ session: s.session, vendor: s.agent ?? null, ...h })))
        .sort((x, y) => x.since.localeCompare(y.since));
      const text =
        rows.length === 0
          ? `No pending requests${session ? ` for session ${session}` : ''}.`
          : rows
              .map(
                (r) =>
                  `${r.request} ${r.kind} in ${r.session}: ${r.prompt ?? '(no prompt)'}${r.options ? ` [options: ${r.options.join(', ')}]` : ''} since ${r.since}`,
              )
              .join('\n');
      return result(text, { requests: rows });
    },
  );

  server.registerTool(
    'respond',
    {
      title: 'Answer a permission or form request',
      description:
        "Answers one pending request (from pending_requests) and waits until the agent's adapter records the answer (attention.answered). " +
        'For a permission give decision "allow" or "deny" on every agent: they map onto the request\'s own options (Cline\'s approve/deny); ' +
        'free text on a permission is a deny with that message. For a form give values (field id → value, required fields included) or ' +
        'decision "decline". Give exactly one of decision, text, values. A request that ended already (answered or dismissed at the agent, ' +
        'timed out) is refused with code not-pending and nothing is sent.',
      inputSchema: z.object({
        session: z.string().min(1).describe('The session holding the request.'),
        request: z.string().min(1).describe('The request id (the attention.requested event id) from pending_requests.'),
        decision: z
          .string()
          .regex(/^[a-z_-]{1,32}$/)
          .optional()
          .describe('"allow" or "deny" for a permission (or one of its option ids), "decline" or "cancel" for a form.'),
        text: z.string().optional().describe('A free-text answer.'),
        values: z.record(z.string(), z.unknown()).optional().describe('Form answers: field id to value.'),
        wait_ms: z
          .number()
          .int()
          .min(1)
          .optional()
          .describe(`How long to wait for the answer to be recorded. Default ${Math.min(ctx.waitMs, 30_000)}.`),
      }),
    },
    async (a) => {
      const given = [a.decision, a.text, a.values].filter((x) => x !== undefined).length;
      if (given !== 1)
        return refusal('invalid-answer', 'give exactly one of decision, text or values.', {
          session: a.session,
          request: a.request,
        });
      const answer: Answer =
        a.decision !== undefined
          ? { option: a.decision }
          : a.text !== undefined
            ? { text: a.text }
            : { values: a.values! };
      return withConsumer(async (c) =>
        respondResult(
          await sendResponse(
            c,
            { sender: ctx.sender },
            {
              session: a.session,
              request: a.request,
              answer,
              timeoutMs: waitOf(a.wait_ms ?? Math.min(ctx.waitMs, 30_000)),
            },
          ),
        ),
      );
    },
  );

  server.registerTool(
    'session_events',
    {
      title: "Read a session's recent events",
      description:
        "Returns the most recent AEP events of one session from the relay's history (oldest first): tool calls, prompts, instructions and their " +
        'acks/deliveries, permission requests, session start and end. capture is the ceiling: metadata (default) gives types, ids, times and ' +
        "structure without text; redacted or full include text only where this server's relay token allows it.",
      inputSchema: z.object({
        session: z.string().min(1).describe('The session id.'),
        limit: z
          .number()
          .int()
          .min(1)
          .max(MAX_EVENTS)
          .optional()
          .describe('How many of the newest events. Default 50.'),
        capture: z
          .enum(CAPTURE_LEVELS)
          .optional()
          .describe('Capture ceiling: none, metadata (default), redacted, full.'),
        types: z
          .array(z.string().min(1))
          .optional()
          .describe('Only these event types, e.g. ["tool.call.started", "x.claude-code.instruction.delivered"].'),
      }),
      annotations: { readOnlyHint: true },
    },
    async (a) =>
      withConsumer(async (c) => {
        const events = await sessionHistory(c, {
          session: a.session,
          limit: a.limit ?? 50,
          capture: a.capture ?? 'metadata',
          ...(a.types ? { types: a.types } : {}),
        });
        if (events.length === 0)
          return result(`No events of session ${a.session} on the relay${a.types ? ' of those types' : ''}.`, {
            session: a.session,
            events: [],
          });
        const rows = events.map(eventRow);
        const text = events.map((e) => `${e.time} ${e.type}${e.cause ? ` ← ${e.cause}` : ''}`).join('\n');
        return result(text, { session: a.session, capture: a.capture ?? 'metadata', events: rows });
      }),
  );
}
