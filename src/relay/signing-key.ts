// D47: the relay's Ed25519 key, which signs the checkpoints of its stores' hash chains. It is a
// file in the state directory (mode 600), made on the first start that needs one; `--signing-key
// F` names a key the operator holds instead. Its public half is published in discovery.
import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { SteeringError } from '../protocol/errors.js';
import { stateDir, writePrivateFile } from '../protocol/state-dir.js';
import { CHECKPOINT_TYPE, keyId } from '../protocol/chain.js';

export interface SigningKey {
  privateKey: KeyObject;
  publicKey: KeyObject;
}

/** Where the relay keeps the key it made itself. */
export const defaultSigningKeyPath = (env: NodeJS.ProcessEnv = process.env): string =>
  join(stateDir(env), 'relay-signing-key.pem');

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

/** Discovery's `audit` block: what a verifier needs to check the checkpoints (D47). */
export const auditBlock = (key: SigningKey): Record<string, unknown> => ({
  chain: 'sha256',
  checkpoint: CHECKPOINT_TYPE,
  key_id: keyId(key.publicKey),
  public_key: key.publicKey.export({ type: 'spki', format: 'pem' }) as string,
});
