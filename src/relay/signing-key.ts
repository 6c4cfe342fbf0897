// D47: the relay's Ed25519 key, which signs the checkpoints of its stores' hash chains. It is a
// file in the state directory (mode 600), made on the first start that needs one; `--signing-key
// F` names a key the operator holds instead. Its public half is published in discovery.
import { join } from 'node:path';
import { stateDir } from '../protocol/state-dir.js';
import { CHECKPOINT_TYPE, keyId } from '../protocol/chain.js';
import type { SigningKey } from '../protocol/key-file.js';

export { ensureSigningKey, loadSigningKey, type SigningKey } from '../protocol/key-file.js';

/** Where the relay keeps the key it made itself. */
export const defaultSigningKeyPath = (env: NodeJS.ProcessEnv = process.env): string =>
  join(stateDir(env), 'relay-signing-key.pem');

/** Discovery's `audit` block: what a verifier needs to check the checkpoints (D47). */
export const auditBlock = (key: SigningKey): Record<string, unknown> => ({
  chain: 'sha256',
  checkpoint: CHECKPOINT_TYPE,
  key_id: keyId(key.publicKey),
  public_key: key.publicKey.export({ type: 'spki', format: 'pem' }) as string,
});
