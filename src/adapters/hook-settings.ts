// Our hooks in a JSON settings file whose `hooks` maps an event to groups `{ matcher?, hooks: [...] }`
// (Claude Code, Codex, Qwen Code): which hooks are ours, putting one group of ours under each
// event and taking ours out again, every other hook and setting kept as it was.
import { SteeringError } from '../protocol/errors.js';
import { readJsonObject, writeJsonObject, type InstallReport } from './install.js';

const ADAPTER_URL = /^http:\/\/127\.0\.0\.1:\d+\/hook\/[A-Za-z0-9_-]+$/;

type Hook = Record<string, unknown>;
const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object';

/** An HTTP hook posting to a loopback adapter URL `/hook/<secret>` (D15). */
const isAdapterHttpHook = (hook: unknown): boolean =>
  isRecord(hook) && hook.type === 'http' && typeof hook.url === 'string' && ADAPTER_URL.test(hook.url);

/** A command hook running the shipped shim. */
export const isShimHook = (hook: unknown): boolean =>
  isRecord(hook) &&
  hook.type === 'command' &&
  typeof hook.command === 'string' &&
  hook.command.includes('aep-steer-hook.sh');

/** The adapter's either way: an HTTP hook to its loopback `/hook/<secret>` URL, or a command running the shim. */
export const isAdapterHook = (hook: unknown): boolean => isAdapterHttpHook(hook) || isShimHook(hook);

/** One event's hook group as it goes into the settings file. */
export type HookGroup = { matcher?: string; hooks: Hook[] };

/** Removes our hooks from one event's groups; drops groups that held only ours, keeps everything else. */
function withoutOurHooks(groups: unknown, isOurs: (hook: unknown) => boolean): { kept: unknown[]; removed: number } {
  if (!Array.isArray(groups)) return { kept: [], removed: 0 };
  let removed = 0;
  const kept: unknown[] = [];
  for (const g of groups) {
    if (!isRecord(g) || !Array.isArray(g.hooks)) {
      kept.push(g);
      continue;
    }
    const all = g.hooks as unknown[];
    const hooks = all.filter((h) => !isOurs(h));
    removed += all.length - hooks.length;
    if (hooks.length > 0 || all.length === 0) kept.push({ ...g, hooks });
  }
  return { kept, removed };
}

function hooksOf(settings: Record<string, unknown>, file: string): Record<string, unknown> {
  const hooks = settings.hooks ?? {};
  if (hooks === null || typeof hooks !== 'object' || Array.isArray(hooks)) {
    throw new SteeringError('CONFIG_INVALID', `${file}: "hooks" is not an object; nothing was changed`);
  }
  return { ...(hooks as Record<string, unknown>) };
}

/**
 * Puts one group of ours last under each event, replacing ours from an earlier install and keeping
 * every other hook and setting. Writes only when something changed; `added` names the events that
 * had none of ours before.
 */
export function installJsonHooks(
  file: string,
  events: readonly string[],
  groupOf: (event: string) => HookGroup,
  isOurs: (hook: unknown) => boolean,
): { changed: boolean; added: string[] } {
  const settings = readJsonObject(file);
  const before = JSON.stringify(settings);
  const hooks = hooksOf(settings, file);
  const added: string[] = [];
  for (const event of events) {
    const { kept, removed } = withoutOurHooks(hooks[event], isOurs);
    hooks[event] = [...kept, groupOf(event)];
    if (removed === 0) added.push(event);
  }
  const next = { ...settings, hooks };
  const changed = JSON.stringify(next) !== before;
  if (changed) writeJsonObject(file, next);
  return { changed, added: changed ? added : [] };
}

/** Takes our hooks out of every event, drops events and a `hooks` left empty, and reports what went. */
export function uninstallJsonHooks(file: string, isOurs: (hook: unknown) => boolean): InstallReport {
  const unchanged: InstallReport = { file, changed: false, added: [], removed: [], notes: [] };
  const settings = readJsonObject(file);
  if (settings.hooks === undefined) return unchanged;
  const hooks = hooksOf(settings, file);
  const removed: string[] = [];
  for (const [event, groups] of Object.entries(hooks)) {
    const { kept, removed: n } = withoutOurHooks(groups, isOurs);
    if (n === 0) continue;
    removed.push(event);
    if (kept.length === 0) delete hooks[event];
    else hooks[event] = kept;
  }
  if (removed.length === 0) return unchanged;
  const next: Record<string, unknown> = { ...settings, hooks };
  if (Object.keys(hooks).length === 0) delete next.hooks;
  writeJsonObject(file, next);
  return { file, changed: true, added: [], removed, notes: [] };
}
