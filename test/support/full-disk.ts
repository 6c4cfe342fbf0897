// A filesystem that fills up, for the fault suite: a small tmpfs where this machine lets a test
// mount one, and a filler file written until the filesystem refuses (ENOSPC).
import { spawnSync } from 'node:child_process';
import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** Mounts a tmpfs of `size` (mount's syntax, `48m`) on `dir`; false where mounting is not allowed. */
export function mountTmpfs(dir: string, size: string): boolean {
  mkdirSync(dir, { recursive: true });
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=700`, 'tmpfs', dir], { stdio: 'ignore' });
  return r.status === 0;
}

/** Writes `dir/filler` until the filesystem is full, to its last block. */
export function fill(dir: string): void {
  const fd = openSync(join(dir, 'filler'), 'w');
  const chunk = Buffer.alloc(1 << 20, 0x61);
  try {
    for (;;) writeSync(fd, chunk);
  } catch {
    // ENOSPC: the disk is full; top up the last bytes too.
    try {
      for (;;) writeSync(fd, chunk, 0, 512);
    } catch {
      // full
    }
  } finally {
    closeSync(fd);
  }
}
