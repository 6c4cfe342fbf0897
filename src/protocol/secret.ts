// Secrets that travel in URLs and files: the hook path segment (D15), the local relay token and
// the console's address. nanoid draws them from the system's CSPRNG in base64url's alphabet (6
// bits a character), which the hook-secret check and every URL accept as they are.
import { readFileSync, statSync } from 'node:fs';
import { nanoid } from 'nanoid';
import { SteeringError } from './errors.js';

/** A new secret of `chars` characters: 32 give 192 bits. */
export const newSecret = (chars = 32): string => nanoid(chars);

/**
 * Reads a bearer token kept in a file (so agent configs name a path, never the token). A file
 * that others may read is refused, like the relay's tokens file (D21).
 */
export function readTokenFile(path: string): string {
  let st: ReturnType<typeof statSync>;
  try {
    st = statSync(path);
  } catch (err) {
    throw new SteeringError('CONFIG_INVALID', `cannot read the token file ${path}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  if ((st.mode & 0o077) !== 0)
    throw new SteeringError(
      'CONFIG_INVALID',
      `token file ${path} is readable by others (mode ${(st.mode & 0o777).toString(8)}); run chmod 600 ${path}`,
    );
  const token = readFileSync(path, 'utf8').trim();
  if (token === '') throw new SteeringError('CONFIG_INVALID', `token file ${path} is empty`);
  return token;
}
