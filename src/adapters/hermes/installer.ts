// Writes the adapter's shell hooks (the shim, D15) into the `hooks:` block of Hermes's config.yaml
// and takes them out again. The file is YAML the user edits by hand, so it is edited as text, line
// by line: every line this installer adds ends with a marker comment, every other line (comments
// included) stays as it was, and a shape it cannot edit safely is refused with nothing written.
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { SteeringError } from '../../protocol/errors.js';
import { secretNote, shimCommand, shimTarget, writeTextFile, type InstallReport, type ShimTarget } from '../install.js';
import type { InstallOptions, Installer } from '../table.js';

/** The twelve events the adapter registers out of Hermes's 23 (vendor-surfaces §5.2). */
export const HERMES_EVENTS = [
  'on_session_start',
  'pre_llm_call',
  'pre_tool_call',
  'post_tool_call',
  'on_session_end',
  'on_session_finalize',
  'on_session_reset',
  'subagent_start',
  'subagent_stop',
  'pre_approval_request',
  'post_approval_response',
  'api_request_error',
] as const;

const HERMES_MARKER = '# aep-steer';
/** Marks a `hooks: {}` the install turned into a block, so uninstall can give the `{}` back. */
const WAS_EMPTY = `${HERMES_MARKER} (was {})`;
const HOOK_TIMEOUT_S = 10;
const SHIM_TIMEOUT_S = 5;

const HERMES_CONSENT_NOTE =
  'Hermes asks once per new hook at the terminal before running it; for gateway or unattended runs approve them once ' +
  'interactively or set hooks_auto_accept: true in config.yaml';

/** `$HERMES_HOME/config.yaml`, default ~/.hermes/config.yaml (hooks are read from there only). */
function hermesConfigPath(
  opts: Pick<InstallOptions, 'project' | 'user'>,
  env: NodeJS.ProcessEnv = process.env,
): string {
  if (opts.project !== undefined) {
    throw new SteeringError(
      'CONFIG_INVALID',
      'Hermes reads hooks from its own config.yaml only: use --user (HERMES_HOME or ~/.hermes)',
    );
  }
  return join(env.HERMES_HOME || join(env.HOME || homedir(), '.hermes'), 'config.yaml');
}

const marked = (line: string): boolean => line.trimEnd().endsWith(HERMES_MARKER);
const indentOf = (line: string): number => line.length - line.trimStart().length;
const blank = (line: string): boolean => line.trim() === '' || line.trimStart().startsWith('#');

/** One hook entry as a one-line flow mapping (YAML accepts JSON scalars), marked as ours. */
function entryLine(
  indent: string,
  event: string,
  url: ShimTarget,
  neutral: unknown,
  attentionTimeoutMs: number,
): string {
  // A gated pre_tool_call may be held for the attention timeout (D14): the shim and Hermes wait longer.
  const shim = event === 'pre_tool_call' ? Math.ceil(attentionTimeoutMs / 1000) + 5 : SHIM_TIMEOUT_S;
  const timeout = event === 'pre_tool_call' ? shim + 5 : HOOK_TIMEOUT_S;
  return `${indent}- {"command": ${JSON.stringify(shimCommand(url, neutral, shim))}, "timeout": ${timeout}}  ${HERMES_MARKER}`;
}

/** Takes out our lines; a key we added stays only if someone put their own entries under it. */
function withoutOurLines(text: string): { text: string; removed: string[] } {
  const lines = text.split('\n');
  const removed = new Set<string>();
  const kept: string[] = [];
  for (const line of lines) {
    if (marked(line) && line.trimStart().startsWith('- ')) {
      // The entry's event is the nearest key above with a smaller indent.
      for (let i = kept.length - 1; i >= 0; i -= 1) {
        const k = /^\s*([A-Za-z0-9_]+):/.exec(kept[i]!);
        if (k && indentOf(kept[i]!) < indentOf(line)) {
          removed.add(k[1]!);
          break;
        }
      }
      continue;
    }
    kept.push(line);
  }
  // Keys we added: drop them when nothing is left under them, else keep them without the marker.
  // Back to front, so a key's children are settled before the key (hooks: holds event keys).
  const out: string[] = [];
  for (let i = kept.length - 1; i >= 0; i -= 1) {
    const line = kept[i]!;
    if (line.trimEnd().endsWith(WAS_EMPTY)) {
      // `hooks: {}` before the install: back to `{}` when nothing else came to live under it.
      const next = out.find((l) => !blank(l));
      out.unshift(next !== undefined && indentOf(next) > 0 ? 'hooks:' : 'hooks: {}');
      continue;
    }
    if (!marked(line)) {
      out.unshift(line);
      continue;
    }
    let children = false;
    for (const l of out) {
      if (l.trim() === '') continue;
      if (indentOf(l) <= indentOf(line)) break;
      if (!blank(l)) {
        children = true;
        break;
      }
    }
    if (children) out.unshift(line.slice(0, line.lastIndexOf(HERMES_MARKER)).trimEnd());
  }
  return { text: out.join('\n'), removed: [...removed] };
}

function insertOurs(text: string, url: ShimTarget, opts: InstallOptions, file: string): string {
  const lines = text === '' ? [] : text.split('\n');
  const at = lines.findIndex((l) => /^hooks\s*:/.test(l));
  const events = [...HERMES_EVENTS];
  const block = (indent: string, item: string, evs: string[]) =>
    evs.flatMap((e) => [
      `${indent}${e}:  ${HERMES_MARKER}`,
      entryLine(item, e, url, opts.neutral, opts.attentionTimeoutMs),
    ]);
  if (at < 0) {
    while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
    return [...lines, `hooks:  ${HERMES_MARKER}`, ...block('  ', '    ', events), ''].join('\n');
  }
  const rest = lines[at]!.replace(/^hooks\s*:/, '')
    .replace(/#.*$/, '')
    .trim();
  if (rest === '{}' || rest === 'null' || rest === '~') {
    lines.splice(at, 1, rest === '{}' ? `hooks:  ${WAS_EMPTY}` : 'hooks:', ...block('  ', '    ', events));
    return lines.join('\n');
  }
  if (rest !== '')
    throw new SteeringError(
      'CONFIG_INVALID',
      `${file}: "hooks:" is written inline; turn it into a block mapping first, nothing was changed`,
    );
  // The block runs to the next top-level line.
  let end = at + 1;
  while (end < lines.length && (blank(lines[end]!) || indentOf(lines[end]!) > 0)) end += 1;
  while (end > at + 1 && lines[end - 1]!.trim() === '') end -= 1;
  const firstChild = lines.slice(at + 1, end).find((l) => !blank(l));
  const indent = firstChild === undefined ? '  ' : ' '.repeat(indentOf(firstChild));
  const additions: string[] = [];
  for (const event of events) {
    const keyAt = lines.findIndex((l, i) => i > at && i < end && new RegExp(`^${indent}${event}\\s*:`).test(l));
    if (keyAt < 0) {
      additions.push(...block(indent, `${indent}  `, [event]));
      continue;
    }
    const value = lines[keyAt]!.replace(/^[^:]*:/, '')
      .replace(/#.*$/, '')
      .trim();
    if (value !== '')
      throw new SteeringError(
        'CONFIG_INVALID',
        `${file}: hooks.${event} is written inline; turn it into a block list first, nothing was changed`,
      );
    const item = lines.slice(keyAt + 1, end).find((l) => !blank(l) && indentOf(l) > indent.length);
    const itemIndent = item?.trimStart().startsWith('- ') ? ' '.repeat(indentOf(item)) : `${indent}  `;
    lines.splice(keyAt + 1, 0, entryLine(itemIndent, event, url, opts.neutral, opts.attentionTimeoutMs));
    end += 1;
  }
  lines.splice(end, 0, ...additions);
  return lines.join('\n');
}

export function installHermes(opts: InstallOptions): InstallReport {
  const file = hermesConfigPath(opts, opts.env);
  const before = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const { text: clean, removed } = withoutOurLines(before);
  const shim = shimTarget(opts);
  const next = insertOurs(clean, shim, opts, file);
  const changed = next !== before;
  if (changed) writeTextFile(file, next);
  const added = HERMES_EVENTS.filter((e) => !removed.includes(e));
  return {
    file,
    changed,
    added: changed ? added : [],
    removed: [],
    notes: [
      HERMES_CONSENT_NOTE,
      secretNote(shim),
      'steering rides pre_llm_call only; the held pre_tool_call gate is opt-in: aep-steer adapter hermes --control [--gate-tools REGEX] (AEP_HERMES_CONTROL=1, AEP_HERMES_GATE_TOOLS)',
    ],
  };
}

export function uninstallHermes(opts: Pick<InstallOptions, 'project' | 'user' | 'env'>): InstallReport {
  const file = hermesConfigPath(opts, opts.env);
  if (!existsSync(file)) return { file, changed: false, added: [], removed: [], notes: [] };
  const before = readFileSync(file, 'utf8');
  const { text, removed } = withoutOurLines(before);
  if (text === before) return { file, changed: false, added: [], removed: [], notes: [] };
  writeTextFile(file, text);
  return { file, changed: true, added: [], removed, notes: [] };
}

export const hermesInstaller: Installer = {
  install: installHermes,
  uninstall: uninstallHermes,
  file: hermesConfigPath,
  describeTarget: 'edits the hooks: block of $HERMES_HOME/config.yaml (default ~/.hermes/config.yaml)',
};
