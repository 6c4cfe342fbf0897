// The spawn tool (D45): an orchestrating model starts a worker session on a vendor adapter run with
// `--spawn-root`, and gets its session id with what to call next (wait, then read).
import { z } from 'zod';
import { sendSpawn, type SpawnOutcome } from '../../consumer/spawn.js';
import { parentToName } from '../mcp-parent.js';
import { result } from '../tool-result.js';
import type { RegisterTool } from '../tool-kit.js';

/** What the model reads: what happened and the next call. */
function sentence(o: SpawnOutcome): string {
  switch (o.outcome) {
    case 'spawned':
      return (
        `Spawned session ${o.session}${o.worktree ? ` in the git worktree ${o.worktree}` : ''}. ` +
        `Next: call wait with session "${o.session}" until its turn ends, then read with the same session for its answer; ` +
        'instruct steers it meanwhile, cancel stops its turn, stop ends it.'
      );
    case 'rejected':
      return `The adapter refused the spawn (${o.code ?? o.reason}): ${o.detail ?? o.reason}. Nothing was started; fix what it names and call spawn again.`;
    case 'refused':
      return `No spawn was made (${o.code}): ${o.detail ?? 'refused'}.`;
    case 'timeout':
      return `No answer from ${o.home} in time; the worker may still start: call list_sessions and look for a session spawned by this command (${o.command}).`;
    case 'unreachable':
      return o.detail;
  }
}

export const spawnTool: RegisterTool = (server, { ctx, withConsumer }) => {
  server.registerTool(
    'spawn',
    {
      title: 'Start a worker session',
      description:
        'Starts a new agent session (a worker) on a vendor adapter that spawns (run with --spawn-root), with its first prompt, in ' +
        'cwd (an absolute directory under one of its spawn roots), optionally in a new git worktree of cwd. Answers the new ' +
        "session's id; then call wait (its turn's end) and read (its final answer).",
      inputSchema: z.object({
        vendor: z.string().min(1).describe('The agent to start: codex, claude-code, copilot or qwen-code.'),
        cwd: z.string().min(1).describe('The absolute directory to run in (a git repository for worktree).'),
        prompt: z.string().min(1).describe("The worker's first prompt."),
        worktree: z
          .union([z.boolean(), z.string().min(1)])
          .optional()
          .describe('true: run in a new git worktree of cwd on a new branch; a string: the branch to make.'),
        model: z.string().min(1).optional().describe("The worker's model, where not the vendor's default."),
      }),
    },
    async (a) =>
      withConsumer(async (c) => {
        const parent = await parentToName(ctx.parent, c);
        const o = await sendSpawn(
          c,
          { sender: ctx.sender, surface: 'mcp' },
          {
            vendor: a.vendor,
            cwd: a.cwd,
            prompt: a.prompt,
            timeoutMs: 90_000,
            ...(parent === undefined ? {} : { parent }),
            ...(a.worktree === undefined ? {} : { worktree: a.worktree }),
            ...(a.model === undefined ? {} : { model: a.model }),
          },
        );
        return result(sentence(o), { ...o }, o.outcome !== 'spawned');
      }),
  );
};
