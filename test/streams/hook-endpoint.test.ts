import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { request } from 'node:http';
import { firstValueFrom, take, toArray } from 'rxjs';
import { DepthGuard, startHookEndpoint, type HookArrival, type HookEndpoint } from '../../src/streams/hook-endpoint.js';
import type { SteeringError } from '../../src/protocol/index.js';

const SECRET = 's3cret-path';

async function endpoint(extra: { budgetMs?: number; bodyLimit?: number } = {}) {
  const errors: SteeringError[] = [];
  const ep = await startHookEndpoint({
    port: 0,
    secret: SECRET,
    neutral: () => ({ body: { neutral: true } }),
    onError: (e) => errors.push(e),
    ...extra,
  });
  return { ep, errors };
}

const post = (ep: HookEndpoint, body: string, path = `/hook/${SECRET}`) =>
  fetch(`http://127.0.0.1:${ep.port}${path}`, { method: 'POST', body }).then(async (r) => ({
    status: r.status,
    text: await r.text(),
  }));

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
    assert.equal(
      errors.map((e) => e.code),
      ['HOOK_BODY_INVALID'],
    );
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
    assert.equal(
      errors.map((e) => e.code),
      ['HOOK_TIMEOUT'],
    );
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

test('D24 DepthGuard: nesting past the limit is caught across chunks; many shallow or quoted brackets pass', () => {
  const feedAll = (limit: number, chunks: string[]) => {
    const g = new DepthGuard(limit);
    return chunks.every((c) => g.feed(Buffer.from(c)));
  };
  // 65 levels split over chunks, the first ones below the opener count that starts the scan.
  const deep = `{"a":${'['.repeat(64)}${']'.repeat(64)}}`;
  assert.not.ok(feedAll(64, [deep.slice(0, 10), deep.slice(10, 40), deep.slice(40)]));
  assert.ok(feedAll(65, [deep.slice(0, 10), deep.slice(10)]), 'exactly at the limit passes');
  // Hundreds of brackets, none deeper than two: counted past the limit, then scanned, and passed.
  const wide = `{"xs":[${Array.from({ length: 300 }, () => '{"k":[1]}').join(',')}]}`;
  assert.ok(feedAll(4, [wide.slice(0, 500), wide.slice(500)]));
  // Brackets inside strings never count as nesting, escaped quotes included.
  const quoted = JSON.stringify({ text: `${'{['.repeat(200)} " ${']}'.repeat(200)}` });
  assert.ok(feedAll(2, [quoted.slice(0, 7), quoted.slice(7)]));
  assert.not.ok(feedAll(2, [`{"a":{"b":{"c":1}}}`]), 'three levels against a limit of two');
});

test('the path decides, with or without a query string', async () => {
  const { ep } = await endpoint();
  const got = firstValueFrom(ep.arrivals$);
  const reply = post(ep, '{"x":1}', `/hook/${SECRET}?from=test`);
  const arrival = await got;
  void arrival.respond({ body: { ok: 1 } });
  assert.is((await reply).text, '{"ok":1}');
  assert.is((await post(ep, '{"x":1}', `/hook/${SECRET}/../hook/${SECRET}`)).status, 404);
  assert.is((await post(ep, '{"x":1}', `/hook/wrong?${SECRET}`)).status, 404);
  await ep.close();
});

test('a reply written while the arrival is handed over arms no budget; a hold made then keeps its longer one', async () => {
  const { ep, errors } = await endpoint({ budgetMs: 40 });
  const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
  try {
    // Answered inside the handover, nobody waiting on the write: resolves true at once.
    const sub = ep.arrivals$.subscribe((a) => {
      if (a.body.n === 1) void a.respond({ body: { now: true } }, false).then((ok) => assert.ok(ok));
      if (a.body.n === 2) a.hold(200);
    });
    assert.equal(await post(ep, '{"n":1}'), { status: 200, text: '{"now":true}' });
    await pause(80);
    assert.equal(
      errors.map((e) => e.code),
      [],
      'no budget expired for the answered hook',
    );
    // Held during the handover: past the 40 ms budget it still waits, and the late reply lands.
    const held = firstValueFrom(ep.arrivals$.pipe(take(1)));
    const reply = post(ep, '{"n":2}');
    const arrival = await held;
    await pause(100);
    assert.is(await arrival.respond({ body: { decided: 'allow' } }), true);
    assert.equal(await reply, { status: 200, text: '{"decided":"allow"}' });
    sub.unsubscribe();
  } finally {
    await ep.close();
  }
});

test('an unanswered hook still gets the neutral reply when its budget runs out', async () => {
  const { ep, errors } = await endpoint({ budgetMs: 40 });
  try {
    const sub = ep.arrivals$.subscribe(() => undefined);
    assert.equal(await post(ep, '{"n":3}'), { status: 200, text: '{"neutral":true}' });
    assert.equal(
      errors.map((e) => e.code),
      ['HOOK_TIMEOUT'],
    );
    sub.unsubscribe();
  } finally {
    await ep.close();
  }
});

test.run();
