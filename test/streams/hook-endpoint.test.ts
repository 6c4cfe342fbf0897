import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { request } from 'node:http';
import { firstValueFrom, take, toArray } from 'rxjs';
import { startHookEndpoint, type HookArrival, type HookEndpoint } from '../../src/streams/hook-endpoint.js';
import type { SteeringError } from '../../src/protocol/index.js';

const SECRET = 's3cret-path';

async function endpoint(extra: { budgetMs?: number; bodyLimit?: number } = {}) {
  const errors: SteeringError[] = [];
  const ep = await startHookEndpoint({ port: 0, secret: SECRET, neutral: () => ({ body: { neutral: true } }), onError: (e) => errors.push(e), ...extra });
  return { ep, errors };
}

const post = (ep: HookEndpoint, body: string, path = `/hook/${SECRET}`) =>
  fetch(`http://127.0.0.1:${ep.port}${path}`, { method: 'POST', body }).then(async (r) => ({ status: r.status, text: await r.text() }));

test('listens on loopback, on the port it reports', async () => {
  const { ep } = await endpoint();
  try {
    assert.ok(ep.port > 0);
    assert.is(ep.url, `http://127.0.0.1:${ep.port}/hook/${SECRET}`);
    const health = await fetch(`http://127.0.0.1:${ep.port}/healthz`);
    assert.equal(await health.json(), { ok: true });
  } finally {
    await ep.close();
  }
});

test('a JSON object becomes one arrival whose reply is written back', async () => {
  const { ep } = await endpoint();
  try {
    const got = firstValueFrom(ep.arrivals$);
    const res = post(ep, '{"a":1}');
    const arrival = await got;
    assert.equal(arrival.body, { a: 1 });
    assert.is(await arrival.respond({ body: { ok: 1 } }), true);
    assert.equal(await res, { status: 200, text: '{"ok":1}' });
    assert.is(await arrival.respond({ body: {} }), false, 'one reply per hook');
  } finally {
    await ep.close();
  }
});

test('D9: respond reports false when the vendor hung up before the reply', async () => {
  const { ep } = await endpoint({ budgetMs: 60_000 });
  try {
    const got = firstValueFrom(ep.arrivals$);
    const req = request({ host: '127.0.0.1', port: ep.port, path: `/hook/${SECRET}`, method: 'POST' });
    req.on('error', () => undefined);
    req.end('{"x":1}');
    const arrival: HookArrival = await got;
    req.destroy();
    await arrival.closed;
    assert.is(await arrival.respond({ body: { late: true } }), false);
  } finally {
    await ep.close();
  }
});

test('a body over the cap gets the neutral reply and no arrival', async () => {
  const { ep, errors } = await endpoint({ bodyLimit: 16 });
  try {
    const arrivals = ep.arrivals$.pipe(take(1), toArray());
    let seen = false;
    const sub = arrivals.subscribe(() => (seen = true));
    const res = await post(ep, JSON.stringify({ big: 'x'.repeat(100) }));
    assert.equal(res, { status: 200, text: '{"neutral":true}' });
    assert.equal(errors.map((e) => e.code), ['HOOK_BODY_INVALID']);
    assert.is(seen, false);
    sub.unsubscribe();
  } finally {
    await ep.close();
  }
});

test('a reply not ready within the budget becomes the neutral reply; the late write reports false', async () => {
  const { ep, errors } = await endpoint({ budgetMs: 20 });
  try {
    const got = firstValueFrom(ep.arrivals$);
    const res = await post(ep, '{"a":1}');
    assert.equal(res, { status: 200, text: '{"neutral":true}' });
    assert.is(await (await got).respond({ body: { late: true } }), false);
    assert.equal(errors.map((e) => e.code), ['HOOK_TIMEOUT']);
  } finally {
    await ep.close();
  }
});

test('GET on the hook path and unknown paths are 404', async () => {
  const { ep } = await endpoint();
  try {
    assert.is((await fetch(`http://127.0.0.1:${ep.port}/hook/${SECRET}`)).status, 404);
    assert.is((await post(ep, '{}', '/other')).status, 404);
  } finally {
    await ep.close();
  }
});

test.run();
