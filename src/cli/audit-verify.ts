// `aep-steer audit --verify TARGET`: checks the hash chains of an adapter log or a relay's SQLite
// store (a file, or a running relay's through `--relay URL` alone), the store's signed checkpoints and the log's signed generation heads (D47). Exit 0
// intact, 3 a record was changed, removed, inserted or reordered, 4 a checkpoint or head does not
// verify with the relay's or the adapter's key (or a compacted head is unsigned), 2 usage.
import { createPublicKey, type KeyObject } from 'node:crypto';
import { closeSync, existsSync, openSync, readFileSync, readSync } from 'node:fs';
import { verifyLog } from '../audit/verify-log.js';
import { verifyStore, verifyStoreData, type StoreVerdict } from '../audit/verify-store.js';
import { readRelayStore } from './audit-remote.js';
import type { ChainBreak } from '../audit/chain-walk.js';
import { publicKeyFrom } from '../protocol/chain.js';
import { defaultSigningKeyPath } from '../relay/signing-key.js';
import { tokenFor } from '../relay/local-token.js';
import { adapterKeyPath } from '../protocol/key-file.js';

export const VERIFY_EXIT = { intact: 0, usage: 2, broken: 3, badCheckpoint: 4 } as const;

const SQLITE_MAGIC = 'SQLite format 3\0';

function isSqlite(path: string): boolean {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(16);
    return readSync(fd, buf, 0, 16, 0) === 16 && buf.toString('latin1') === SQLITE_MAGIC;
  } finally {
    closeSync(fd);
  }
}

/** The relay's public key: `--key` (a public or private PEM), `--relay` discovery's, or the local relay's key file. */
async function relayKey(opts: VerifyOptions): Promise<KeyObject | string> {
  if (opts.key !== undefined) {
    try {
      return createPublicKey(readFileSync(opts.key, 'utf8'));
    } catch (err) {
      return `cannot read the key ${opts.key}: ${(err as Error).message}`;
    }
  }
  if (opts.relay !== undefined) {
    try {
      const token = tokenFor(opts.relay, opts.token ?? (opts.env ?? process.env).AEP_TOKEN, opts.env);
      const auth = token === undefined ? {} : { headers: { authorization: `Bearer ${token}` } };
      const doc = (await (await fetch(new URL('/.well-known/aep', opts.relay), auth)).json()) as {
        audit?: { public_key?: string };
      };
      const key = doc.audit?.public_key === undefined ? undefined : publicKeyFrom(doc.audit.public_key);
      return key ?? `the relay at ${opts.relay} publishes no audit.public_key in its discovery document`;
    } catch (err) {
      return `cannot read the discovery document of ${opts.relay}: ${(err as Error).message}`;
    }
  }
  const local = defaultSigningKeyPath(opts.env);
  if (existsSync(local)) return createPublicKey(readFileSync(local, 'utf8'));
  return `no key to check the checkpoints with: give --key FILE or --relay URL (${local} does not exist)`;
}

/** The adapter's public key for a log: `--key`, else the local adapter's key file; undefined when neither is there. */
function adapterKey(opts: VerifyOptions): KeyObject | string | undefined {
  const path = opts.key ?? adapterKeyPath(opts.env);
  if (opts.key === undefined && !existsSync(path)) return undefined;
  try {
    return createPublicKey(readFileSync(path, 'utf8'));
  } catch (err) {
    return `cannot read the key ${path}: ${(err as Error).message}`;
  }
}

export interface VerifyOptions {
  key?: string;
  relay?: string;
  /** With `relay` and no target: the relay's token (else AEP_TOKEN or the local token). */
  token?: string;
  json?: boolean;
  env?: NodeJS.ProcessEnv;
}

const line = (b: ChainBreak): string =>
  `  ${b.kind} at ${b.at} (record ${b.n} of ${b.chain}): ${b.detail}${b.contradicts ? `; contradicts ${b.contradicts}` : ''}`;

/** A running relay's store, read through `GET /audit/rows` (the `audit` right). */
async function verifyRelay(url: string, opts: VerifyOptions): Promise<StoreVerdict | string> {
  const key = await relayKey(opts);
  if (typeof key === 'string') return key;
  try {
    return verifyStoreData(
      url,
      await readRelayStore(url, opts.token ?? (opts.env ?? process.env).AEP_TOKEN, opts.env),
      key,
    );
  } catch (err) {
    return (err as Error).message;
  }
}

export async function runVerify(
  target: string | undefined,
  opts: VerifyOptions,
  io: { out: NodeJS.WritableStream; err: NodeJS.WritableStream },
): Promise<number> {
  if (target === undefined) {
    if (opts.relay === undefined) {
      io.err.write('audit --verify: give an adapter log, a relay store file, or --relay URL for a running relay\n');
      return VERIFY_EXIT.usage;
    }
    const v = await verifyRelay(opts.relay, opts);
    if (typeof v === 'string') {
      io.err.write(`audit --verify: ${v}\n`);
      return VERIFY_EXIT.usage;
    }
    return report(opts.relay, v.breaks, v.badCheckpoints, storeSummary(v), v, opts, io);
  }
  if (!existsSync(target)) {
    io.err.write(`audit --verify: cannot read ${target}; give an adapter log or a relay's store file\n`);
    return VERIFY_EXIT.usage;
  }
  let breaks: ChainBreak[];
  let bad: StoreVerdict['badCheckpoints'] = [];
  let summary: string;
  let verdict: unknown;
  if (isSqlite(target)) {
    const key = await relayKey(opts);
    if (typeof key === 'string') {
      io.err.write(`audit --verify: ${key}\n`);
      return VERIFY_EXIT.usage;
    }
    const v = verifyStore(target, key);
    ({ breaks, badCheckpoints: bad } = v);
    summary = storeSummary(v);
    verdict = v;
  } else {
    const key = adapterKey(opts);
    if (typeof key === 'string') {
      io.err.write(`audit --verify: ${key}\n`);
      return VERIFY_EXIT.usage;
    }
    const v = verifyLog(target, key);
    if (v.signed > 0 && key === undefined) {
      io.err.write(
        `audit --verify: ${target}'s generation heads are signed, and no key checks them: give --key FILE (the adapter's ${adapterKeyPath(opts.env)})\n`,
      );
      return VERIFY_EXIT.usage;
    }
    ({ breaks, badHeads: bad } = v);
    summary = `${v.records} records in ${v.files.length} files${v.start.n > 0 ? `, from compacted head ${v.start.n}` : ''}${v.checked > 0 ? `, ${v.checked} signed heads` : ''}`;
    verdict = v;
  }
  return report(target, breaks, bad, summary, verdict, opts, io);
}

const storeSummary = (v: StoreVerdict): string => `${v.rows} rows in ${v.sources} chains, ${v.checkpoints} checkpoints`;

/** Prints the verdict and gives the exit code. */
function report(
  target: string,
  breaks: ChainBreak[],
  bad: StoreVerdict['badCheckpoints'],
  summary: string,
  verdict: unknown,
  opts: VerifyOptions,
  io: { out: NodeJS.WritableStream },
): number {
  const code = breaks.length > 0 ? VERIFY_EXIT.broken : bad.length > 0 ? VERIFY_EXIT.badCheckpoint : VERIFY_EXIT.intact;
  if (opts.json) io.out.write(`${JSON.stringify(verdict)}\n`);
  else {
    const head = code === VERIFY_EXIT.intact ? 'intact' : breaks.length > 0 ? 'BROKEN' : 'CHECKPOINTS FAIL';
    const text = [`${target}: ${head}: ${summary}`, ...breaks.map(line), ...bad.map((b) => `  ${b.id}: ${b.detail}`)];
    io.out.write(`${text.join('\n')}\n`);
  }
  return code;
}
