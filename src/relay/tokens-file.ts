// D39: the tokens file, read again while the relay runs. A change is noticed by fs.watch on the
// file's directory (editors replace a file by renaming over it) and by a stat poll where watching
// misses it (network file systems); a reload can also be asked for (the CLI: SIGHUP). A file that
// turns bad keeps the last good entries in force: a typo must not lock everyone out, nor let
// anyone in.
import { statSync, watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';
import { loadTokensFile, type TokenEntry } from './acl.js';

/** How often the file is stat'ed besides fs.watch. */
const TOKENS_POLL_MS = 1000;
/** A burst of writes (an editor saving) is read once, after it settles. */
const SETTLE_MS = 25;

export interface TokensWatchOptions {
  /** The entries in force at start (already loaded: a bad file at start is a start error). */
  initial: TokenEntry[];
  /** New entries, only when they differ from the ones in force. */
  onChange(entries: TokenEntry[], why: string): void;
  log(line: string): void;
  /** 0: no poll. */
  pollMs?: number;
  /** False: no fs.watch and no poll; only `reload()` reads the file. */
  watch?: boolean;
}

export interface TokensWatch {
  /** Reads the file now; `why` names the trigger in the log. */
  reload(why: string): void;
  close(): void;
}

/** What a stat tells of a change; a missing file is a state of its own. */
function signature(path: string): string {
  try {
    const s = statSync(path);
    return `${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}:${s.mode}`;
  } catch {
    return 'missing';
  }
}

export function watchTokensFile(path: string, opts: TokensWatchOptions): TokensWatch {
  let inForce = JSON.stringify(opts.initial);
  let count = opts.initial.length;
  // A bad file is reported once per distinct reason, not on every poll while it stays bad.
  let lastError: string | undefined;
  let seen = signature(path);
  let settle: NodeJS.Timeout | undefined;
  let closed = false;

  function reload(why: string): void {
    if (closed) return;
    seen = signature(path);
    let entries: TokenEntry[];
    try {
      entries = loadTokensFile(path);
    } catch (err) {
      const reason = (err as Error).message;
      if (reason !== lastError) {
        opts.log(
          `relay: tokens file not applied (${why}): ${reason}; the last good one (${count} entries) stays in force until the file is fixed`,
        );
        lastError = reason;
      }
      return;
    }
    if (lastError !== undefined) opts.log(`relay: tokens file ${path} is valid again`);
    lastError = undefined;
    const text = JSON.stringify(entries);
    if (text === inForce) return;
    inForce = text;
    count = entries.length;
    opts.log(
      `relay: tokens file re-read (${why}): ${count} entries in force; removed or changed tokens lose their connections`,
    );
    opts.onChange(entries, why);
  }

  const soon = (why: string) => {
    clearTimeout(settle);
    settle = setTimeout(() => reload(why), SETTLE_MS);
    settle.unref();
  };

  let watcher: FSWatcher | undefined;
  let poll: NodeJS.Timeout | undefined;
  if (opts.watch !== false) {
    const name = basename(path);
    try {
      watcher = watch(dirname(path), { persistent: false }, (_event, file) => {
        if (file === null || file === name) soon('file changed');
      });
      // A watch that breaks (its directory removed) leaves the poll to notice.
      watcher.on('error', () => watcher?.close());
    } catch {
      watcher = undefined;
    }
    const every = opts.pollMs ?? TOKENS_POLL_MS;
    if (every > 0) {
      poll = setInterval(() => {
        const now = signature(path);
        if (now === seen) return;
        seen = now;
        soon('file changed');
      }, every);
      poll.unref();
    }
  }

  return {
    reload,
    close() {
      closed = true;
      clearTimeout(settle);
      clearInterval(poll);
      watcher?.close();
    },
  };
}
