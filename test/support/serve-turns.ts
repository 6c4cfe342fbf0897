// The turns an e2e suite drives on a vendor's own server (`qwen serve`, `opencode serve`) as the
// person's client would, and what the adapter's stream says of the suite's one session there.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AepEvent } from '../../src/protocol/index.js';
import type { VendorStack } from './vendor-e2e.js';

interface ServeTurnsOf {
  /** Where the gate files go. */
  root(): string;
  stack(): VendorStack;
  /** The session the suite steers (set once the server made it). */
  session(): string;
  /** Sends a prompt to the session through the server, as the person's client does. */
  prompt(session: string, text: string): Promise<unknown>;
}

export function serveTurns(o: ServeTurnsOf) {
  const of = (type: string, cause?: string): AepEvent | undefined => o.stack().find(o.session(), type, cause);
  const all = (type: string): AepEvent[] =>
    o.stack().events.filter((e) => e.session === o.session() && e.type === type);
  /** Resolves with the session's `run.finished` number `n` (0-based). */
  const finishedAfter = (n: number): Promise<AepEvent> =>
    o.stack().waitFor('the turn finished', () => all('run.finished')[n]);
  /** A prompt whose shell call waits for a file; resolves once the hooks saw the tool start. */
  async function slowTurn(tag: string): Promise<{ release: () => void; finished: number }> {
    const gate = join(o.root(), `${tag}.go`);
    const tools = all('tool.requested').length;
    const finished = all('run.finished').length;
    await o.prompt(o.session(), `[[TURN]] [[WAITFILE:${gate}]] ${tag} run the slow command`);
    await o.stack().waitFor(`${tag}: the slow tool call`, () => all('tool.requested')[tools]);
    return { release: () => writeFileSync(gate, ''), finished };
  }
  return { of, all, finishedAfter, slowTurn };
}
