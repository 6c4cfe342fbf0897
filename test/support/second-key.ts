// D48's second key in tests: an allow sent as another identity on its own relay connection.
import { RelayConsumer } from '../../src/consumer/connection.js';
import { sendResponse } from '../../src/consumer/respond.js';
import type { TestStack } from '../cli/support.js';

/** Allows `request` as `agent` (surface cli) and returns the settled outcome (`answered`, `pending-second`, …). */
export async function allowAs(stack: TestStack, agent: string, session: string, request: string): Promise<string> {
  const c = await RelayConsumer.connect({ url: stack.relayUrl, token: stack.token, agent });
  try {
    const r = await sendResponse(
      c,
      { sender: agent },
      { session, request, answer: { option: 'allow' }, timeoutMs: 20_000 },
    );
    return r.outcome;
  } finally {
    await c.close();
  }
}
