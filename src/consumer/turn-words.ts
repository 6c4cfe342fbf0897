// D45: a wait's or a read's outcome told in a sentence that says what happened and what to do
// next, one text for the CLI and the MCP tools (`next` names the command or the tool).
import type { ReadOutcome, Turn, WaitOutcome } from './turns.js';

export interface TurnVoice {
  /** How to name a step: `aep-steer read --session S` or the tool `read`. */
  read(session: string, turn: number): string;
  wait(session: string, afterTurn: number): string;
  respond(session: string, request: string): string;
  instruct(session: string): string;
}

export const CLI_TURN_VOICE: TurnVoice = {
  read: (s, n) => `\`aep-steer read --session ${s} --turn ${n}\``,
  wait: (s, n) => `\`aep-steer wait --session ${s} --after-turn ${n}\``,
  respond: (s, r) => `\`aep-steer respond --session ${s} --request ${r} allow\` (or deny)`,
  instruct: (s) => `\`aep-steer instruct --session ${s} --start "…"\``,
};

export const MCP_TURN_VOICE: TurnVoice = {
  read: (s, n) => `call read {session: "${s}", turn: ${n}}`,
  wait: (s, n) => `call wait {session: "${s}", after_turn: ${n}}`,
  respond: (s, r) => `call respond {session: "${s}", request: "${r}", …} (allow or deny)`,
  instruct: (s) => `call instruct {session: "${s}", text: "…", idle: "start"}`,
};

const endWord = (t: Turn): string =>
  t.ended === 'finished' ? 'finished' : t.ended === 'cancelled' ? 'was cancelled' : 'failed';

export function waitSentence(o: WaitOutcome, v: TurnVoice): string {
  switch (o.outcome) {
    case 'turn-ended':
      return `Turn ${o.turn.n} of session ${o.session} ${endWord(o.turn)}${o.turn.why ? ` (${o.turn.why})` : ''}. Next: ${v.read(o.session, o.turn.n)} for its answer; to give it more work, ${v.instruct(o.session)}, then ${v.wait(o.session, o.turn.n)}.`;
    case 'request': {
      const r = o.request;
      const what = r.prompt ?? `${r.kind}${r.subject ? `: ${r.subject}` : ''}`;
      return `Session ${o.session} waits for an answer (${r.kind}): ${what}. Next: ${v.respond(o.session, r.request)}; the turn goes on once it is answered.`;
    }
    case 'ended':
      return `Session ${o.session} has ended (${o.reason}) after ${o.turns} turn${o.turns === 1 ? '' : 's'}. Nothing more will come from it${o.turns > 0 ? `; ${v.read(o.session, o.turns)} gives its last turn` : ''}.`;
    case 'timeout':
      return o.running
        ? `Still running: turn ${o.turns} of session ${o.session} has not ended after ${o.waitedMs} ms. Wait again (${v.wait(o.session, o.turns - 1)}), or steer it with an instruction.`
        : o.turns === 0
          ? `Still starting: session ${o.session} has begun no turn after ${o.waitedMs} ms. Wait again.`
          : `No new turn: session ${o.session} is idle after turn ${o.turns}, and nothing came in ${o.waitedMs} ms. Give it work (${v.instruct(o.session)}) or read turn ${o.turns}.`;
    case 'unreachable':
      return `Could not follow session ${o.session}: ${o.detail}`;
  }
}

export function readSentence(o: ReadOutcome): string {
  switch (o.outcome) {
    case 'read': {
      const t = o.turn;
      if (t.ended === undefined) return `Turn ${t.n} of session ${o.session} is still running: wait for it first.`;
      const head = `Turn ${t.n} of ${o.turns} in session ${o.session} ${endWord(t)}${t.why ? ` (${t.why})` : ''}.`;
      if (t.answer !== undefined) return `${head} Its final answer:\n${t.answer}`;
      return o.withheld
        ? `${head} Its answer is not shown at this token's capture (${t.capture}): a token with capture "redacted" or "full" reads it.`
        : `${head} The stream carries no final answer for it.`;
    }
    case 'no-turn':
      return o.turns === 0
        ? `Session ${o.session} has begun no turn yet: wait for one first.`
        : `Session ${o.session} has ${o.turns} turn${o.turns === 1 ? '' : 's'}; there is no turn ${o.asked}.`;
    case 'unreachable':
      return `Could not read session ${o.session}: ${o.detail}`;
  }
}
