// D46/D48 in a person's words: who decided a request, and a risky request that waits for a
// second approver. Shared by the CLI, the console and MCP, so each says it the same way.
import { describeDecidedBy, type DecidedBy } from '../machines/decided-by.js';

/** A first allow of a risky request was taken; the request is still held. */
export const pendingSecondSentence = (request: string, first: DecidedBy): string =>
  `Needs a second approver: request ${request} is risky, and its first allow (by ${describeDecidedBy(first)}) is recorded; it stays held until a different identity allows it too. Anyone may deny it at once.`;

/** What a pending request shows about D48: why it is risky, and who gave the first allow if anyone did. */
export function secondApproverNote(risky: { rule: string; why?: string } | undefined, first?: DecidedBy): string {
  if (risky === undefined) return '';
  const why = `risky (${risky.rule}${risky.why === undefined ? '' : `: ${risky.why}`})`;
  return first === undefined
    ? `${why}; an allow needs two approvers`
    : `${why}; needs a second approver (first allow by ${describeDecidedBy(first)})`;
}
