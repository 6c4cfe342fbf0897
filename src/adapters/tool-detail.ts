// What a held tool call will do, in the words its vendor's own dialog uses (D35): shared by every
// vendor that holds tool permissions.

/** Tool input fields that say what a tool will do, in the order a dialog shows them (D35). */
const DETAIL_FIELDS = ['command', 'commands', 'file_path', 'notebook_path', 'path', 'url', 'pattern', 'query'] as const;

/** The command, path or URL of a tool call, as the vendor's own dialog shows it (D35); undefined when it has none. */
export function toolDetail(toolInput: unknown): string | undefined {
  if (toolInput === null || typeof toolInput !== 'object') return undefined;
  const input = toolInput as Record<string, unknown>;
  for (const f of DETAIL_FIELDS) {
    const v = input[f];
    // Cline's run_commands takes a list of commands.
    const text = Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string').join('; ') : v;
    if (typeof text === 'string' && text.trim() !== '') return text;
  }
  return undefined;
}
