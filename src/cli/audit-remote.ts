// `aep-steer audit --verify --relay URL` (D47): reads a relay's rows, evicted places, checkpoints
// and heads page by page from `GET /audit/rows` and checks them as a store file is checked. The
// key comes from `--key` (one the operator keeps apart from the relay) or the relay's discovery
// document; a relay that changed its own rows could publish another key too, so `--key` is the
// stronger check.
import type { Gone, Row, StoreData } from '../audit/verify-store.js';
import { tokenFor, tokenHint } from '../relay/local-token.js';

type Page = { items: Record<string, unknown>[]; next?: string };

/** Every page of one part; a refusal is thrown as the sentence the relay gave, with what to do. */
async function readPart(
  url: string,
  token: string | undefined,
  part: string,
  env?: NodeJS.ProcessEnv,
): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  let after: string | undefined;
  do {
    const u = new URL('/audit/rows', url);
    u.searchParams.set('part', part);
    if (after !== undefined) u.searchParams.set('after', after);
    const res = await fetch(u, token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } });
    const body = (await res.json().catch(() => ({}))) as Page & { detail?: string; error?: string };
    if (res.status === 401) throw new Error(`the relay at ${url} refused the token; ${tokenHint(env)}`);
    if (!res.ok)
      throw new Error(`the relay at ${url} answered ${res.status}: ${body.detail ?? body.error ?? 'no reason given'}`);
    out.push(...body.items);
    after = body.next;
  } while (after !== undefined);
  return out;
}

/** What a verify checks, read from a running relay. */
export async function readRelayStore(
  url: string,
  given: string | undefined,
  env?: NodeJS.ProcessEnv,
): Promise<StoreData> {
  const token = tokenFor(url, given, env);
  const [rows, gone, checkpoints, heads] = await Promise.all(
    ['rows', 'gone', 'checkpoints', 'heads'].map((part) => readPart(url, token, part, env)),
  );
  return {
    rows: rows as unknown as Row[],
    gone: gone as unknown as Gone[],
    checkpoints: checkpoints as unknown as StoreData['checkpoints'],
    heads: new Map(
      (heads as { source: string; n: number; head: string }[]).map((h) => [h.source, { n: h.n, head: h.head }]),
    ),
  };
}
