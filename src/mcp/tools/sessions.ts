// The list_sessions tool: the sessions the relay knows, with what each declares it can be steered by.
import { z } from 'zod';
import type { BoardSession } from '../../consumer/board.js';
import { result } from '../tool-result.js';
import type { RegisterTool } from '../tool-kit.js';

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
    // D43: instruct with idle "start" can start its turn while it waits for its person.
    startable: s.startable === true,
    // D43: a turn runs now; "idle" state says only that nothing waits, so a start goes into it.
    running: s.running === true,
    queue_length: s.relayQueued ?? s.queue.length,
    pending_requests: s.holds.length,
    last_activity: s.updatedAt,
  };
}

/** `list_sessions`: the roster read now, so a claim that changed without an event shows. */
export const listSessions: RegisterTool = (server, { ctx, withConsumer }) => {
  server.registerTool(
    'list_sessions',
    {
      title: 'List agent sessions',
      description:
        'Lists the coding-agent sessions this relay knows, newest activity first: session id, vendor (claude-code, codex, cline, openhands…), ' +
        'machine state (idle, queued, holding.permission, holding.elicitation, ended), whether an adapter is live for it, the steering verbs it ' +
        'declares (x.<vendor>.control.instruct → use instruct; x.<vendor>.control.send_input → use send_input; control.attention.respond → use respond; control.cancel → use cancel), ' +
        "how many instructions are queued, how many permission/form requests wait for an answer, the last activity time (the agent's own events only), " +
        'startable (instruct with idle "start" can begin a turn in it) and running (a turn runs now, whatever the state says; a start then goes into that turn), ' +
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
};
