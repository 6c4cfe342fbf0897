// Posting one push to one target: a few tries with doubling waits (a phone's push server may be
// briefly away), each bounded in time; a 4xx other than 408/429 is final, since trying again
// would send the same refused body.
export interface Post {
  url: string;
  headers: Record<string, string>;
  body: string;
}

export interface RetryPolicy {
  attempts: number;
  firstWaitMs: number;
  /** One try's time limit. */
  timeoutMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 4, firstWaitMs: 500, timeoutMs: 5000 };

export type Delivered = { ok: true; tries: number } | { ok: false; tries: number; detail: string };

const retryable = (status: number): boolean => status >= 500 || status === 408 || status === 429;

/** Credentials in the URL (`https://user:pass@host/topic`) become a Basic header; fetch refuses them in the URL. */
function withCredentials(post: Post): Post {
  const u = new URL(post.url);
  if (u.username === '' && u.password === '') return post;
  const auth = Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64');
  u.username = '';
  u.password = '';
  return { ...post, url: u.toString(), headers: { ...post.headers, authorization: `Basic ${auth}` } };
}

export async function deliver(
  post: Post,
  policy: RetryPolicy = DEFAULT_RETRY,
  signal?: AbortSignal,
): Promise<Delivered> {
  const p = withCredentials(post);
  let detail = 'not tried';
  for (let tries = 1; tries <= policy.attempts; tries++) {
    if (signal?.aborted) return { ok: false, tries: tries - 1, detail: 'the console is closing' };
    try {
      const res = await fetch(p.url, {
        method: 'POST',
        headers: p.headers,
        body: p.body,
        redirect: 'error',
        signal: signal
          ? AbortSignal.any([signal, AbortSignal.timeout(policy.timeoutMs)])
          : AbortSignal.timeout(policy.timeoutMs),
      });
      await res.arrayBuffer().catch(() => undefined);
      if (res.ok) return { ok: true, tries };
      detail = `HTTP ${res.status}`;
      if (!retryable(res.status)) return { ok: false, tries, detail };
    } catch (err) {
      const e = err as Error & { cause?: { code?: string; message?: string } };
      detail = e.cause?.code ?? e.cause?.message ?? e.message;
    }
    if (tries < policy.attempts) await sleep(policy.firstWaitMs * 2 ** (tries - 1), signal);
  }
  return { ok: false, tries: policy.attempts, detail };
}

const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        resolve();
      },
      { once: true },
    );
  });
