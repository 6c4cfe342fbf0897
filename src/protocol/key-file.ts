// D47: an Ed25519 key kept in a file (PKCS#8 PEM, mode 600): the relay's, which signs the
// checkpoints of its stores' chains, and the adapter's, which signs the head each generation of
// its log starts from (what compaction leaves as the oldest kept file's start). Each is made on
// the first start that needs it; an operator may name one they hold instead.
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { SteeringError } from './errors.js';
import { stateDir, writePrivateFile } from './state-dir.js';

export interface SigningKey {
  privateKey: KeyObject;
  publicKey: KeyObject;
}

/** Where the adapter keeps the key that signs its log's generation heads (D47). */
export const adapterKeyPath = (env: NodeJS.ProcessEnv = process.env): string =>
  join(stateDir(env), 'adapter-signing-key.pem');

/** Reads an Ed25519 private key (PKCS#8 PEM); a missing, unreadable or other kind of key is SIGNING_KEY_INVALID. */
export function loadSigningKey(path: string): SigningKey {
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new SteeringError(
      'SIGNING_KEY_INVALID',
      `cannot read the signing key ${path}: ${(err as Error).message}; give an Ed25519 private key in PEM, or remove the file to have one made`,
      { cause: err },
    );
  }
  if (privateKey.asymmetricKeyType !== 'ed25519')
    throw new SteeringError(
      'SIGNING_KEY_INVALID',
      `the signing key ${path} is ${privateKey.asymmetricKeyType}, not Ed25519; make one with: openssl genpkey -algorithm ed25519`,
    );
  if ((statSync(path).mode & 0o077) !== 0)
    throw new SteeringError('SIGNING_KEY_INVALID', `the signing key ${path} may be read by others; chmod 600 it`);
  return { privateKey, publicKey: createPublicKey(privateKey) };
}

/** The key at `path`, made there (mode 600) when no file is there yet. */
export function ensureSigningKey(path: string): SigningKey {
  if (!existsSync(path)) {
    const { privateKey } = generateKeyPairSync('ed25519');
    writePrivateFile(path, privateKey.export({ type: 'pkcs8', format: 'pem' }) as string);
  }
  return loadSigningKey(path);
}
