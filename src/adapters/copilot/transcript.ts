// The final answer of a GitHub Copilot CLI turn. Its agentStop hook names only `transcriptPath`,
// the session's `events.jsonl` (`<session-state>/<sessionId>/events.jsonl`, one session event a
// line): the answer is the `data.content` of the main agent's last `assistant.message` with text,
// after the turn's last `user.message`. Copilot writes the file a moment behind its hooks (observed
// on 1.0.102: read as the hook arrived, it ended some events before the answer; a hook command
// started ~40 ms later found it there), so the file's end is read again until the line Copilot
// writes for this very hook is there (the turn before it is then all written), or a bound passes:
// an answer is never taken from a file that may still end in the turn before. Each
// read is bounded (only the file's last bytes, a regular file only: a FIFO would never answer), and
// any trouble means no answer, never an error on the hook path (D15).
import { closeSync, constants, existsSync, fstatSync, openSync, readSync } from 'node:fs';
import { basename, dirname, isAbsolute } from 'node:path';

/** How much of the file's end is read: a turn's last lines (its answer, turn end, the hook's own line). */
const TAIL_BYTES = 512 * 1024;

type Line = { type?: unknown; agentId?: unknown; data?: { content?: unknown; parentToolCallId?: unknown } };

const parsed = (text: string): Line | undefined => {
  try {
    const v = JSON.parse(text) as unknown;
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Line) : undefined;
  } catch {
    return undefined;
  }
};

/** A subagent's message names its agent or the task call it runs under; the main agent's does not. */
const mainAgent = (l: Line): boolean => l.agentId === undefined && l.data?.parentToolCallId === undefined;

/** What a transcript's tail says of the turn: its answer, and whether the turn's end was written. */
interface TailScan {
  answer?: string;
  /** The hook's own line is there: the turn is all written, reading again finds nothing more. */
  settled: boolean;
}

/** The line Copilot writes as it runs this agentStop hook, known by the hook input's `timestamp`. */
const stopLineOf = (l: Line, at: number): boolean => {
  const d = l.data as { hookType?: unknown; input?: { timestamp?: unknown } } | undefined;
  return l.type === 'hook.start' && d?.hookType === 'agentStop' && d.input?.timestamp === at;
};

/**
 * The turn's answer in a transcript's tail, once the line of the agentStop hook fired at `at` is in
 * it: the main agent's last assistant message with text before that line and after the turn's last
 * user message. `whole`: the text starts at the file's start; otherwise its first line may be cut
 * and is not read. A line that does not parse (one being written) is passed over.
 */
export function scanTail(text: string, whole: boolean, at: number): TailScan {
  const lines = text.split('\n');
  let stopped = false;
  for (let i = lines.length - 1; i >= (whole ? 0 : 1); i -= 1) {
    const raw = lines[i]!.trim();
    const l = raw === '' ? undefined : parsed(raw);
    if (l === undefined || !mainAgent(l)) continue;
    if (!stopped) {
      stopped = stopLineOf(l, at);
      continue;
    }
    if (l.type === 'user.message') break;
    const said = l.type === 'assistant.message' ? l.data?.content : undefined;
    if (typeof said === 'string' && said.trim() !== '') return { answer: said, settled: true };
  }
  return { settled: stopped };
}

/** The last `max` bytes of a regular file, and whether they are all of it; undefined on any trouble. */
export function readTail(path: string, max = TAIL_BYTES): { text: string; whole: boolean } | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    const st = fstatSync(fd);
    if (!st.isFile()) return undefined;
    const size = Math.min(st.size, max);
    const buf = Buffer.alloc(size);
    const got = readSync(fd, buf, 0, size, st.size - size);
    return { text: buf.subarray(0, got).toString('utf8'), whole: st.size <= max };
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) {
      try {
        closeSync(fd);
      } catch {
        // closed already
      }
    }
  }
}

/** Whether `path` may be read as the transcript of `session` (`…/<session>/events.jsonl`, absolute). */
const transcriptOf = (path: unknown, session: string | undefined): path is string =>
  typeof path === 'string' &&
  isAbsolute(path) &&
  basename(path) === 'events.jsonl' &&
  session !== undefined &&
  basename(dirname(path)) === session;

/**
 * How long the answer is waited for, and how often the file is read meanwhile. Usually tens of ms;
 * a headless server on a busy machine was seen past 2 s. The session's next hooks wait this long at most.
 */
const ANSWER_WAIT = { limitMs: 5000, everyMs: 20 };

/**
 * The final answer of the turn whose agentStop hook (`input`) named a transcript, read again until
 * the hook's own line is written or `limitMs` passed; undefined for a path that is not the
 * session's transcript, a missing file, a hook with no timestamp, or a turn that said nothing.
 */
export async function transcriptAnswer(
  input: { transcriptPath?: unknown; sessionId?: unknown; timestamp?: unknown },
  wait: { limitMs: number; everyMs: number } = ANSWER_WAIT,
): Promise<string | undefined> {
  const path = input.transcriptPath;
  const session = typeof input.sessionId === 'string' ? input.sessionId : undefined;
  const at = input.timestamp;
  if (!transcriptOf(path, session) || typeof at !== 'number') return undefined;
  const until = Date.now() + wait.limitMs;
  for (;;) {
    const tail = readTail(path);
    // A file not there yet may come (a hosted session's first lines were seen late): read again.
    if (tail === undefined && existsSync(path)) return undefined;
    const scan = tail === undefined ? { settled: false } : scanTail(tail.text, tail.whole, at);
    if (scan.settled || Date.now() >= until) return scan.answer;
    await new Promise((r) => setTimeout(r, wait.everyMs));
  }
}
