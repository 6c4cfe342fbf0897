// Readers for vendor hook bodies. A hook body is untrusted JSON, so each field is checked for its
// shape where it is read, and one of the wrong shape reads as absent (the hook path fails open, D15).

/** A non-empty string, else undefined. */
export const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** A non-negative integer (a count or a duration), else undefined. */
export const int = (v: unknown): number | undefined =>
  typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : undefined;

/** A JSON object, else `{}`. */
export const obj = (v: unknown): Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

/** A JSON array, else `[]`. */
export const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
