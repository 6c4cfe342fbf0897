// Building blocks for AEP-0002 Annex A mappings of Claude-style hook inputs (Claude Code, and the
// Codex, Qwen Code and VS Code hooks that copy its field names). Observations stay at capture
// `metadata` (AEP-0003 §9 default posture): names, ids, counts, durations and digests, never free text.
import { hash } from 'node:crypto';
import type { EventData } from '../protocol/envelope.js';
import { redactText } from '../protocol/redact.js';
import type { ObservationSpec } from '../streams/surface.js';
import { int, str } from './hook-input.js';
import type { HookInput, MapRule } from './table.js';

/** Canonical JSON: sorted keys, no whitespace (AEP-0003 §9.3). */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** `*_digest`: SHA-256 of the canonical JSON, first 16 bytes as hex (AEP-0003 §9.3). */
// One-shot `hash` (no Hash object per hook): a third of createHash's cost for a tool input.
export const digest = (value: unknown): string => hash('sha256', canonicalJson(value), 'hex').slice(0, 32);

/** Drops undefined members so payloads stay minimal. */
export function compact(data: Record<string, unknown>): EventData {
  const out: EventData = {};
  for (const [k, v] of Object.entries(data)) if (v !== undefined) out[k] = v;
  return out;
}

/** The run a hook belongs to: the vendor's per-prompt id (a Claude Code turn is an AEP run). */
const runOf = (input: HookInput, field = 'prompt_id'): string | undefined => str(input[field]);

/** AEP `tool` of a Claude-style tool hook: its name and the vendor's call id. */
export const toolOf = (input: HookInput): EventData =>
  compact({ name: str(input.tool_name) ?? 'unknown', call_id: str(input.tool_use_id) });

/** One observation with no run, and a subject when there is one. */
export const observation = (type: string, data: Record<string, unknown>, subject?: string): ObservationSpec =>
  subject === undefined ? { type, data: compact(data) } : { type, data: compact(data), subject };

/**
 * An observation builder for hooks whose run `runIn` reads: the data compacted, the run when the
 * hook names one, then each of `extra` (subject, severity, capture) that is set.
 */
export const observationIn =
  (runIn: (input: HookInput) => string | undefined) =>
  (type: string, input: HookInput, data: Record<string, unknown>, extra: Partial<ObservationSpec> = {}) => {
    const spec: ObservationSpec = { type, data: compact(data) };
    const run = runIn(input);
    if (run !== undefined) spec.run = run;
    for (const [k, v] of Object.entries(extra))
      if (v !== undefined) (spec as unknown as Record<string, unknown>)[k] = v;
    return spec;
  };

const obs = observationIn((input) => runOf(input));

/** Deliberately no observation (Annex A "not captured", or raised by the runtime itself). */
export const none: MapRule = () => [];

export const sessionStarted =
  (clientName: string): MapRule =>
  (input) => [
    {
      type: 'session.started',
      data: compact({ client: { name: clientName }, 'gen_ai.request.model': str(input.model) }),
    },
  ];

/**
 * session.started of a hook with no run (Codex, Qwen Code, VS Code): the client, what started it
 * (`source`), the model, then each of `fields` as the hook sent it.
 */
export const sessionStartedBy =
  (clientName: string, fields: readonly string[] = []): MapRule =>
  (input) => [
    observation('session.started', {
      client: { name: clientName },
      trigger: str(input.source),
      'gen_ai.request.model': str(input.model),
      ...Object.fromEntries(fields.map((f) => [f, str(input[f])])),
    }),
  ];

export const runStarted: MapRule = (input) => [obs('run.started', input, { trigger: 'user' })];
export const runFinished: MapRule = (input) => [withAnswer(obs('run.finished', input, {}), input)];

/** The longest final answer carried on the stream; a longer one is cut, and says so. */
const ANSWER_MAX = 16_000;

/**
 * D45: the turn's final answer (the Stop hook's `last_assistant_message`) as `run.finished`
 * `summary`, redacted-class: secrets and PII scrubbed here, and the relay serves it only to a
 * reader whose capture allows it (a metadata reader sees that the turn finished, not what it said).
 */
export function withAnswer(spec: ObservationSpec, input: HookInput): ObservationSpec {
  const said = str(input.last_assistant_message);
  if (said === undefined || said === '') return spec;
  const cut = said.length > ANSWER_MAX ? `${said.slice(0, ANSWER_MAX)} [cut at ${ANSWER_MAX} characters]` : said;
  return { ...spec, capture: 'redacted', data: { ...spec.data, summary: redactText(cut) } };
}
export const runFailed: MapRule = (input) => [
  obs('run.failed', input, { reason: 'error', error: compact({ type: str(input.error) }) }, { severity: 'error' }),
];

const argsDigest = (input: HookInput): string | undefined =>
  input.tool_input === undefined ? undefined : digest(input.tool_input);
const resultDigest = (input: HookInput): string | undefined =>
  input.tool_response === undefined ? undefined : digest(input.tool_response);

export const toolRequested: MapRule = (input) => [
  obs('tool.requested', input, { tool: toolOf(input), args_digest: argsDigest(input) }),
];
export const toolCompleted: MapRule = (input) => [
  obs('tool.completed', input, {
    tool: toolOf(input),
    status: 'success',
    duration_ms: int(input.duration_ms),
    result_digest: resultDigest(input),
  }),
];

/** tool.requested and tool.completed with the tool name as subject and no run (Codex, Qwen Code, VS Code). */
export const namedToolRequested: MapRule = (input) => [
  observation('tool.requested', { tool: toolOf(input), args_digest: argsDigest(input) }, str(input.tool_name)),
];
export const namedToolCompleted: MapRule = (input) => [
  observation('tool.completed', { tool: toolOf(input), result_digest: resultDigest(input) }, str(input.tool_name)),
];
export const toolFailed: MapRule = (input) => [
  obs(
    'tool.failed',
    input,
    {
      tool: toolOf(input),
      error: { type: input.is_interrupt === true ? 'interrupt' : 'error' },
      duration_ms: int(input.duration_ms),
    },
    { severity: 'warning' },
  ),
];
export const toolDenied: MapRule = (input) => [obs('tool.denied', input, { tool: toolOf(input), by: 'policy' })];

export const subagentStarted: MapRule = (input) => [
  obs('delegation.subagent.started', input, { agent_type: str(input.agent_type) }, { subject: str(input.agent_id) }),
];
export const subagentStopped: MapRule = (input) => [
  obs(
    'delegation.subagent.stopped',
    input,
    { agent_type: str(input.agent_type), status: 'completed' },
    { subject: str(input.agent_id) },
  ),
];

/**
 * The tool and subagent hooks of a vendor whose hooks carry no run (Qwen Code, VS Code), mapped
 * alike: each names its tool or its subagent as subject.
 */
export const namedMaps: Record<string, MapRule> = {
  PreToolUse: namedToolRequested,
  PostToolUse: namedToolCompleted,
  SubagentStart: (input) => [
    observation('delegation.subagent.started', { agent_type: str(input.agent_type) }, str(input.agent_id)),
  ],
  SubagentStop: (input) => [
    observation('delegation.subagent.stopped', { agent_type: str(input.agent_type) }, str(input.agent_id)),
  ],
};

export const sessionCompacted: MapRule = (input) => [
  { type: 'session.compacted', data: compact({ trigger: str(input.trigger) }) },
];

export const taskPlanned: MapRule = (input) => [
  obs('progress.task.planned', input, { task: compact({ id: str(input.task_id) }) }),
];
export const taskCompleted: MapRule = (input) => [
  obs('progress.task.completed', input, { task: compact({ id: str(input.task_id) }), status: 'completed' }),
];
export const progressStatus: MapRule = (input) => [
  obs('progress.status', input, { phase: str(input.notification_type) }),
];

/** A vendor-scoped observation carrying only the hook name and a few structural fields. */
export const vendorSession =
  (type: string, fields: string[] = []): MapRule =>
  (input) => {
    const data: Record<string, unknown> = { hook: str(input.hook_event_name) };
    for (const f of fields)
      data[f] =
        typeof input[f] === 'string' || typeof input[f] === 'boolean' || typeof input[f] === 'number'
          ? input[f]
          : undefined;
    return [{ type, data: compact(data) }];
  };
