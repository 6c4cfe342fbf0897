// D47: the hash chain that sits beside every stored record (an adapter log line, a relay store
// row), never inside the AEP envelope, and the relay's signed checkpoints of chain heads. What a
// writer stamps and a verifier recomputes must be the same bytes, so both use these functions.
import { createHash, createPublicKey, hash, sign, verify, type KeyObject } from 'node:crypto';

/** What the first record of a chain holds as its predecessor's hash. */
export const GENESIS = '0'.repeat(64);

/** A place in one chain: how many records it holds, and the hash of the last. */
export interface ChainHead {
  n: number;
  head: string;
}

export const FIRST: ChainHead = { n: 0, head: GENESIS };

/** The SHA-256 of an adapter log line, exactly as written (its `n` and `p` included). */
export const lineHash = (line: string): string => hash('sha256', line, 'hex');

/** A relay row's hash: its place, its predecessor's hash, then the event text as stored. */
export const rowHash = (n: number, prev: string, raw: string): string => hash('sha256', `${n}\n${prev}\n${raw}`, 'hex');

/** One chain's head as a checkpoint signs it. */
export interface SignedHead extends ChainHead {
  source: string;
}

/** The checkpoint event type (a vendor type of this project, AEP-0001 §6). */
export const CHECKPOINT_TYPE = 'x.aep-steer.state.checkpoint';

/**
 * The bytes a checkpoint signs: a fixed label, then one line per chain in the order given. The
 * label keeps a signature over these bytes from meaning anything else.
 */
function checkpointMessage(heads: readonly SignedHead[]): Buffer {
  let text = 'aep-steer checkpoint v1\n';
  for (const h of heads) text += `${JSON.stringify(h.source)} ${h.n} ${h.head}\n`;
  return Buffer.from(text);
}

/** The public key's short name a checkpoint carries: the first 16 hex of its DER's SHA-256. */
export const keyId = (publicKey: KeyObject): string =>
  createHash('sha256')
    .update(publicKey.export({ type: 'spki', format: 'der' }))
    .digest('hex')
    .slice(0, 16);

export const signHeads = (heads: readonly SignedHead[], privateKey: KeyObject): string =>
  sign(null, checkpointMessage(heads), privateKey).toString('base64');

/** True when `sig` is `publicKey`'s signature over these heads. */
export function verifyHeads(heads: readonly SignedHead[], sig: string, publicKey: KeyObject): boolean {
  try {
    return verify(null, checkpointMessage(heads), publicKey, Buffer.from(sig, 'base64'));
  } catch {
    return false;
  }
}

/** A public key from its SPKI PEM text (discovery's `audit.public_key`); undefined when it is not one. */
export function publicKeyFrom(pem: string): KeyObject | undefined {
  try {
    return createPublicKey(pem);
  } catch {
    return undefined;
  }
}

/** The bytes a log generation's header signs: a label of its own, the generation and the head it starts from. */
const logHeadMessage = (g: number, at: ChainHead): Buffer =>
  Buffer.from(`aep-steer log head v1\n${g} ${at.n} ${at.head}\n`);

/** A generation header's signature fields: `s` over its head, `key` the signer's key id. */
export interface HeadSignature {
  s: string;
  key: string;
}

/** Signs the head generation `g` of an adapter log starts from (its `seg` header, D47). */
export const signLogHead = (g: number, at: ChainHead, privateKey: KeyObject, publicKey: KeyObject): HeadSignature => ({
  s: sign(null, logHeadMessage(g, at), privateKey).toString('base64'),
  key: keyId(publicKey),
});

/** True when `s` is `publicKey`'s signature over generation `g` starting from `at`. */
export function verifyLogHead(g: number, at: ChainHead, s: string, publicKey: KeyObject): boolean {
  try {
    return verify(null, logHeadMessage(g, at), publicKey, Buffer.from(s, 'base64'));
  } catch {
    return false;
  }
}
