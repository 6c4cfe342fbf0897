// D48: which held requests are risky. A rule names a tool pattern and a test over what the tool
// asks (D35: its command or path); a request that matches is marked with the rule's name and why,
// never with the command text, so a metadata reader learns that it is risky, not what it runs.
// The built-in rules are always on; `--policy FILE` adds the user's own (or switches builtins off).
import { readFileSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import { SteeringError } from '../protocol/errors.js';

interface RiskMark {
  rule: string;
  why: string;
}

/** What a rule looks at: the tool's name, its shell command or file path, and the session's working directory. */
export interface RiskSubject {
  tool: string;
  command?: string;
  path?: string;
  cwd?: string;
}

interface Rule {
  name: string;
  why: string;
  test(s: RiskSubject): boolean;
}

export interface RiskPolicy {
  readonly rules: readonly { name: string; why: string }[];
  /** The first rule the request breaks, or undefined. */
  match(s: RiskSubject): RiskMark | undefined;
}

const SHELL_TOOLS = /^(Bash|bash|shell|run_shell_command|exec_command|execute_command|terminal)$/;
const WRITE_TOOLS = /^(Write|Edit|MultiEdit|NotebookEdit|write_file|edit|replace|apply_patch|write_to_file)$/;

/** A path that leaves `cwd` (absolute elsewhere, or climbing out with `..`); home-relative paths count as outside. */
function outside(path: string, cwd: string | undefined): boolean {
  if (path.startsWith('~')) return true;
  if (cwd === undefined) return isAbsolute(path);
  const rel = relative(cwd, resolve(cwd, path));
  return rel === '..' || rel.startsWith('../') || isAbsolute(rel);
}

/** The paths an `rm` with both -r and -f removes, from one shell command. */
function rmRfTargets(command: string): string[] | undefined {
  for (const part of command.split(/&&|\|\||;|\|/)) {
    const words = part.trim().split(/\s+/);
    const at = words.findIndex((w) => w === 'rm' || w.endsWith('/rm'));
    if (at < 0) continue;
    const args = words.slice(at + 1);
    const flags = args.filter((w) => w.startsWith('-')).join('');
    const recursive = /-[a-zA-Z]*[rR]/.test(flags) || args.includes('--recursive');
    const force = /-[a-zA-Z]*f/.test(flags) || args.includes('--force');
    if (recursive && force) return args.filter((w) => !w.startsWith('-'));
  }
  return undefined;
}

const BUILTIN_RULES: readonly Rule[] = [
  {
    name: 'force-push',
    why: "a force push rewrites a remote branch's history",
    test: (s) =>
      s.command !== undefined &&
      /\bgit\b[^;&|]*\bpush\b[^;&|]*(\s--force\b|\s--force-with-lease\b|\s-[a-zA-Z]*f\b|\s\+\S)/.test(s.command),
  },
  {
    name: 'rm-rf-outside-cwd',
    why: 'a recursive forced delete reaches outside the working directory',
    test: (s) => {
      const targets = s.command === undefined ? undefined : rmRfTargets(s.command);
      return targets?.some((t) => t === '/' || t === '*' || outside(t, s.cwd) || t.includes('$')) === true;
    },
  },
  {
    name: 'write-outside-cwd',
    why: 'the tool writes a file outside the working directory',
    test: (s) => WRITE_TOOLS.test(s.tool) && s.path !== undefined && outside(s.path, s.cwd),
  },
  {
    name: 'curl-pipe-shell',
    why: 'a script fetched from the network runs in a shell',
    test: (s) => s.command !== undefined && /\b(curl|wget)\b[^|]*\|\s*(sudo\s+)?(ba|z|da)?sh\b/.test(s.command),
  },
];

/** The shell command or file path a tool input carries, under the names the vendors use. */
export function subjectOf(tool: string, input: Record<string, unknown>, cwd?: string): RiskSubject {
  const str = (k: string) => (typeof input[k] === 'string' ? (input[k] as string) : undefined);
  const s: RiskSubject = { tool };
  const command = SHELL_TOOLS.test(tool) || str('command') !== undefined ? (str('command') ?? str('cmd')) : undefined;
  if (command !== undefined) s.command = command;
  const path = str('file_path') ?? str('path') ?? str('notebook_path') ?? str('absolute_path');
  if (path !== undefined) s.path = path;
  if (cwd !== undefined) s.cwd = cwd;
  return s;
}

function policyOf(rules: readonly Rule[]): RiskPolicy {
  return {
    rules: rules.map((r) => ({ name: r.name, why: r.why })),
    match(s) {
      const r = rules.find((x) => x.test(s));
      return r === undefined ? undefined : { rule: r.name, why: r.why };
    },
  };
}

export const DEFAULT_POLICY: RiskPolicy = policyOf(BUILTIN_RULES);

const NAME = /^[a-z0-9][a-z0-9-]{0,47}$/;
const KEYS = new Set(['name', 'why', 'tool', 'command', 'path']);

function bad(file: string, what: string): SteeringError {
  return new SteeringError(
    'CONFIG_INVALID',
    `policy file ${file}: ${what}. It takes {"builtins"?: true|false, "rules": [{"name", "why"?, "tool"?, "command"?, "path"?}]} with regular expressions for tool, command and path (see docs/operations.md, risky requests)`,
  );
}

function regex(file: string, at: string, v: unknown): RegExp | undefined {
  if (v === undefined) return undefined;
  if (typeof v !== 'string' || v === '') throw bad(file, `${at} must be a non-empty regular expression`);
  try {
    return new RegExp(v);
  } catch {
    throw bad(file, `${at} is not a valid regular expression`);
  }
}

function userRule(file: string, raw: unknown, i: number): Rule {
  const at = `rules[${i}]`;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw bad(file, `${at} is not an object`);
  const r = raw as Record<string, unknown>;
  const unknown = Object.keys(r).find((k) => !KEYS.has(k));
  if (unknown !== undefined) throw bad(file, `${at} has an unknown key "${unknown}"`);
  if (typeof r.name !== 'string' || !NAME.test(r.name))
    throw bad(file, `${at}.name must be lowercase letters, digits and dashes (at most 48)`);
  if (r.why !== undefined && (typeof r.why !== 'string' || r.why.length > 200))
    throw bad(file, `${at}.why must be a sentence of at most 200 characters`);
  const tool = regex(file, `${at}.tool`, r.tool);
  const command = regex(file, `${at}.command`, r.command);
  const path = regex(file, `${at}.path`, r.path);
  if (command === undefined && path === undefined && tool === undefined)
    throw bad(file, `${at} needs at least one of tool, command, path`);
  return {
    name: r.name,
    why: typeof r.why === 'string' ? r.why : `matches the policy rule ${r.name}`,
    test: (s) =>
      (tool === undefined || tool.test(s.tool)) &&
      (command === undefined || (s.command !== undefined && command.test(s.command))) &&
      (path === undefined || (s.path !== undefined && path.test(s.path))),
  };
}

/** Parses a policy document; throws CONFIG_INVALID naming the file and what is wrong. */
export function parsePolicy(text: string, file: string): RiskPolicy {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw bad(file, 'is not JSON');
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw bad(file, 'is not a JSON object');
  const d = doc as Record<string, unknown>;
  const extra = Object.keys(d).find((k) => k !== 'rules' && k !== 'builtins');
  if (extra !== undefined) throw bad(file, `has an unknown key "${extra}"`);
  if (d.builtins !== undefined && typeof d.builtins !== 'boolean') throw bad(file, '"builtins" must be true or false');
  if (d.rules !== undefined && !Array.isArray(d.rules)) throw bad(file, '"rules" must be an array');
  const rules = ((d.rules as unknown[] | undefined) ?? []).map((r, i) => userRule(file, r, i));
  const names = new Set<string>();
  for (const r of [...(d.builtins === false ? [] : BUILTIN_RULES), ...rules]) {
    if (names.has(r.name)) throw bad(file, `the rule name "${r.name}" is used twice`);
    names.add(r.name);
  }
  return policyOf([...(d.builtins === false ? [] : BUILTIN_RULES), ...rules]);
}

/** Reads `--policy FILE`; a missing or unreadable file is CONFIG_INVALID with the path. */
export function loadPolicy(file: string): RiskPolicy {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (cause) {
    throw new SteeringError('CONFIG_INVALID', `policy file ${file} cannot be read (${(cause as Error).message})`, {
      cause,
    });
  }
  return parsePolicy(text, file);
}
