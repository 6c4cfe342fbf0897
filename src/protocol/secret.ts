// Secrets that travel in URLs and files: the hook path segment (D15), the local relay token and
// the console's address. nanoid draws them from the system's CSPRNG in base64url's alphabet (6
// bits a character), which the hook-secret check and every URL accept as they are.
import { nanoid } from 'nanoid';

/** A new secret of `chars` characters: 32 give 192 bits. */
export const newSecret = (chars = 32): string => nanoid(chars);
