// Hermes Agent (shell hooks; source pin v2026.7.7.2) as a table. No Hermes runs here, so every row
// rests on the design record and vendor-surfaces §5: the one consumed context return is the
// pre_llm_call reply `{"context": …}` (joined into the user message at turn start), the real
// session end is on_session_finalize (on_session_end fires per turn), and an opt-in gated
// pre_tool_call carries the deny decision only (D13).
import type { ClassifiedHook, HeldDecision, ObservationSpec } from '../../streams/surface.js';
import { int, obj, str } from '../hook-input.js';
import { compact, digest, observationIn } from '../hook-maps.js';
import { hermesInstaller } from './installer.js';
import { hermesOptions } from './options.js';
import { collapseEndReason, toolPermissionHold } from '../table.js';
import { toolDetail } from '../tool-detail.js';
import type { HeldSpec, HookInput, MapRule, VendorTable } from '../table.js';

const TOKEN = 'hermes';
const DR = 'vendor-surfaces §5.3';

const extraOf = (input: HookInput) => obj(input.extra);

/** The deny message must be non-empty (vendor-surfaces §5.4). */
const DENY_MESSAGE = 'The operator blocked this tool call through AEP control.attention.respond.';

const toolName = (input: HookInput): string => str(input.tool_name) ?? 'unknown';

function preToolHold(input: HookInput): HeldSpec {
  const tool = toolName(input);
  // D35: what the tool will do, as redacted-class text.
  const context = { tool_name: tool, tool_call_id: str(extraOf(input).tool_call_id) };
  return toolPermissionHold(TOKEN, tool, context, undefined, toolDetail(input.tool_input));
}

/** allow → `{}` (the call goes on to Hermes's own approval gate); deny → block with a message. */
function decidePreTool(_hook: ClassifiedHook, d: HeldDecision): unknown {
  if (d.option === 'allow') return {};
  return { action: 'block', message: d.message !== undefined && d.message.trim() !== '' ? d.message : DENY_MESSAGE };
}

// ---- AEP-0002 Annex A, Hermes table (vendor-surfaces §5.2) ----------------------------------

/** Hermes names the turn (the AEP run) in `extra.turn_id`. */
const observe = observationIn((input) => str(extraOf(input).turn_id));

const toolOf = (input: HookInput) =>
  compact({ name: str(input.tool_name) ?? 'unknown', call_id: str(extraOf(input).tool_call_id) });

/** At most four choices are offered; blanks are dropped, object choices give their description. */
const CLARIFY_MAX_CHOICES = 4;

function clarifyChoices(raw: unknown): string[] {
  if (!Array.isArray(raw)) return [];
  const labels: string[] = [];
  for (const c of raw) {
    const label =
      typeof c === 'string'
        ? c.trim()
        : (str(obj(c).label) ?? str(obj(c).description) ?? str(obj(c).text) ?? '').trim();
    if (label !== '') labels.push(label);
  }
  return labels.slice(0, CLARIFY_MAX_CHOICES);
}

/** The clarify tool asks the user in Hermes's own UI: a read-only form card (respond_via oob). */
function clarifyCard(input: HookInput): ObservationSpec[] {
  const toolInput = obj(input.tool_input);
  const question = str(toolInput.question);
  if (question === undefined) return [];
  const choices = clarifyChoices(toolInput.choices);
  const field =
    choices.length > 0
      ? {
          id: '1',
          type: 'select',
          label: question,
          required: true,
          other: true,
          choices: choices.map((label, i) => ({ id: String(i + 1), label })),
        }
      : { id: '1', type: 'string', label: question, required: true };
  return [
    observe(
      'attention.requested',
      input,
      { kind: 'form', prompt: `${TOKEN} asks a question`, fields: [field], respond_via: ['oob'] },
      {
        subject: str(extraOf(input).tool_call_id),
        capture: 'redacted',
      },
    ),
  ];
}

const TIMEOUT_SENTINEL = /did not (provide a response|respond) within/i;
const DISMISSED_SENTINEL = /^(the user cancelled|\[clarify prompt could not be delivered\])/i;

/** How a clarify call ended: answered (choice id or free text), timed out, or dismissed. */
function clarifyOutcome(input: HookInput): ObservationSpec[] {
  const extra = extraOf(input);
  const subject = str(extra.tool_call_id);
  const dismissed = observe('attention.resolved', input, { resolution: 'dismissed' }, { subject });
  if (extra.status !== 'ok') return [dismissed];
  let result: Record<string, unknown> = {};
  try {
    result = obj(JSON.parse(String(extra.result ?? '')));
  } catch {
    return [dismissed];
  }
  const response = typeof result.user_response === 'string' ? result.user_response.trim() : '';
  if (response === '' || DISMISSED_SENTINEL.test(response)) return [dismissed];
  if (TIMEOUT_SENTINEL.test(response)) return [observe('attention.timeout', input, {}, { subject })];
  const offered = Array.isArray(result.choices_offered) ? result.choices_offered.map((c) => String(c).trim()) : [];
  const picked = offered.indexOf(response);
  const value = picked >= 0 ? String(picked + 1) : response;
  return [
    observe(
      'attention.answered',
      input,
      { answer: { values: { '1': value } }, via: 'oob' },
      {
        subject,
        capture: picked >= 0 ? undefined : 'redacted',
      },
    ),
  ];
}

function postToolCall(input: HookInput): ObservationSpec[] {
  const extra = extraOf(input);
  const tool = toolOf(input);
  const duration = int(extra.duration_ms);
  const subject = str(input.tool_name);
  let first: ObservationSpec;
  if (extra.status === 'blocked')
    first = observe('tool.denied', input, { tool, duration_ms: duration, by: 'policy' }, { subject });
  else if (extra.status === 'error') {
    first = observe(
      'tool.failed',
      input,
      { tool, duration_ms: duration, error: { type: str(extra.error_type) ?? 'error' } },
      { subject, severity: 'warning' },
    );
  } else {
    first = observe(
      'tool.completed',
      input,
      { tool, duration_ms: duration, result_digest: extra.result === undefined ? undefined : digest(extra.result) },
      { subject },
    );
  }
  return input.tool_name === 'clarify' ? [first, ...clarifyOutcome(input)] : [first];
}

const APPROVAL_OPTIONS = [
  { id: 'once', label: 'Allow once' },
  { id: 'session', label: 'Allow for this session' },
  { id: 'always', label: 'Add to permanent allowlist' },
  { id: 'deny', label: 'Deny' },
];

/** A subagent hook: the child session is its subject, and leads its data. */
const subagent =
  (type: string, data: (extra: Record<string, unknown>) => Record<string, unknown>): MapRule =>
  (input) => {
    const extra = extraOf(input);
    const child = str(extra.child_session_id);
    return [observe(type, input, { child: compact({ session: child }), ...data(extra) }, { subject: child })];
  };

const maps: Record<string, MapRule> = {
  on_session_start: (input) => [observe('session.started', input, { client: { name: TOKEN } })],
  pre_llm_call: (input) => {
    const message = extraOf(input).user_message;
    return [
      observe('run.started', input, {
        trigger: 'user',
        message_digest: message === undefined ? undefined : digest(message),
      }),
    ];
  },
  pre_tool_call: (input) => [
    observe(
      'tool.requested',
      input,
      { tool: toolOf(input), args_digest: input.tool_input == null ? undefined : digest(input.tool_input) },
      { subject: str(input.tool_name) },
    ),
    ...(input.tool_name === 'clarify' ? clarifyCard(input) : []),
  ],
  post_tool_call: postToolCall,
  // Hermes's own approval gate, observed read-only: answered in its UI (respond_via oob).
  pre_approval_request: (input) => {
    const extra = extraOf(input);
    const command = str(extra.command);
    return [
      observe(
        'attention.requested',
        input,
        {
          kind: 'permission',
          prompt: command === undefined ? `${TOKEN} requests approval` : `Approval requested: ${command}`,
          options: APPROVAL_OPTIONS,
          respond_via: ['oob'],
        },
        { subject: str(extra.pattern_key), capture: 'redacted' },
      ),
    ];
  },
  post_approval_response: (input) => {
    const extra = extraOf(input);
    const subject = str(extra.pattern_key);
    if (extra.choice === 'timeout') return [observe('attention.timeout', input, {}, { subject })];
    return [
      observe(
        'attention.answered',
        input,
        { answer: { option: str(extra.choice) ?? 'deny' }, via: 'oob' },
        { subject },
      ),
    ];
  },
  // Fires per turn: it closes the run, never the session (vendor-surfaces §5.2).
  on_session_end: (input) =>
    extraOf(input).interrupted === true
      ? [observe('run.cancelled', input, { by: 'user' })]
      : [observe('run.finished', input, {})],
  subagent_start: subagent('delegation.subagent.started', (extra) => ({ role: str(extra.child_role) })),
  subagent_stop: subagent('delegation.subagent.stopped', (extra) => ({
    status: str(extra.child_status),
    duration_ms: int(extra.duration_ms),
  })),
  api_request_error: (input) => {
    const extra = extraOf(input);
    return [
      observe(
        `x.${TOKEN}.api.error`,
        input,
        {
          status_code: int(extra.status_code),
          retry_count: int(extra.retry_count),
          reason: str(extra.reason),
        },
        { severity: 'error' },
      ),
    ];
  },
  // The end moment (D10): the runtime emits session.ended itself, after the drops.
  on_session_finalize: () => [],
  // Fires after the id rotates, carrying the successor's id: not an end (vendor-surfaces §5.2).
  on_session_reset: (input) => [
    { type: `x.${TOKEN}.session.reset`, data: compact({ reason: str(extraOf(input).reason) }) },
  ],
};

/**
 * Hermes's own fallback rule: `x.hermes.<name with underscores as dots>` (fixture: pre_verify → x.hermes.pre.verify).
 */
function hermesFallback(input: HookInput): ObservationSpec[] {
  const name = (str(input.hook_event_name) ?? 'unknown')
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, '_')
    .replace(/^_+|_+$/g, '');
  const parts = name.split('_').filter((p) => p !== '');
  const type = parts.length >= 2 ? `x.${TOKEN}.${parts.join('.')}` : `x.${TOKEN}.session.${parts[0] ?? 'unknown'}`;
  return [observe(type, input, {})];
}

export const hermes: VendorTable = {
  token: TOKEN,
  version: '2026.7.7.2',
  steering: 'instruct',
  port: 8393, // D15
  attentionTimeoutMs: 55_000, // D14
  // Approval hooks always carry session_id "": their identity is extra.session_key (vendor-surfaces §5.2).
  identify: (input) => {
    const event = str(input.hook_event_name);
    const session = str(input.session_id) ?? str(extraOf(input).session_key);
    return event === undefined || session === undefined ? undefined : { session, event };
  },
  // Subagent hooks land on the parent session but are observations only; a child's own turns run
  // under the child's session id, so no main-session queue is ever drained there.
  subagent: () => false,
  unlistedReason: 'Hermes reads context only from the pre_llm_call reply (vendor-surfaces §5.3)',
  // The pre_tool_call gate is opt-in, scoped by a tool regex (default: every tool; vendor-surfaces §5.4).
  options: hermesOptions,
  // D44: Hermes has no queue of its own to reach; its only way in is the pre_llm_call reply.
  queue: {
    keeps: 'adapter',
    calls:
      'none: Hermes takes context only in the pre_llm_call reply, so the adapter keeps what waits and edits, moves and promotes it itself until that moment carries it',
    evidence: 'vendor-surfaces §5.3',
  },
  moments: {
    // Observed only, but the start moment: a resumed session keeps its id and reopens.
    on_session_start: {
      role: 'observe',
      starts: true,
      reason: 'Hermes reads context only from the pre_llm_call reply',
      evidence: DR,
    },
    pre_llm_call: { role: 'context', evidence: DR },
    pre_tool_call: {
      role: 'gated',
      tool: toolName,
      hold: preToolHold,
      decide: decidePreTool,
      open: { role: 'observe', reason: 'context returned here is read by nothing', evidence: DR },
      evidence: 'vendor-surfaces §5.4',
    },
    on_session_end: {
      role: 'observe',
      reason: 'fires per turn; the queue survives turn boundaries',
      evidence: 'vendor-surfaces §5.5',
    },
    on_session_reset: { role: 'observe', reason: 'carries the successor session id', evidence: 'vendor-surfaces §5.5' },
    // `reason` (shutdown, new_session, …) collapses to the AEP enum (fixture: shutdown → normal).
    on_session_finalize: {
      role: 'end',
      reason: (input) => collapseEndReason(extraOf(input).reason),
      evidence: 'vendor-surfaces §5.5',
    },
  },
  replies: {
    // The shim's default posture answers {} to every hook: no block, no context (vendor-surfaces §5.1).
    neutral: {},
    context: (_event, text) => ({ context: text }),
    noUserNotice: {
      why: 'Hermes accepts only `context` (and a block on pre_tool_call) from a hook: nothing is shown to the user alone',
      evidence: 'vendor-surfaces §5.3',
    },
  },
  maps,
  fallback: hermesFallback,
  installer: hermesInstaller,
};
