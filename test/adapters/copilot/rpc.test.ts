// The headless server's framing (`Content-Length`, then the JSON body): messages split across
// chunks or packed into one are read whole, multi-byte text counts in bytes, a bad body is skipped.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { frame, frameReader } from '../../../src/adapters/copilot/server/rpc.js';

test('frames split across chunks and packed together are read whole, in order', () => {
  const got: unknown[] = [];
  const read = frameReader((m) => got.push(m));
  const bytes = Buffer.from(frame({ id: 1, result: { messageId: 'm-ü' } }) + frame({ method: 'session.event' }));
  read(bytes.subarray(0, 7));
  read(bytes.subarray(7, 40));
  read(bytes.subarray(40));
  assert.equal(got, [{ id: 1, result: { messageId: 'm-ü' } }, { method: 'session.event' }]);
});

test('a malformed body is skipped and the next frame still parses', () => {
  const got: unknown[] = [];
  const read = frameReader((m) => got.push(m));
  read(Buffer.from(`Content-Length: 3\r\n\r\n{x}${frame({ ok: true })}`));
  assert.equal(got, [{ ok: true }]);
});

test.run();
