// One-time pairing codes: 24 base64url characters from the CSPRNG (144 bits), good for 5 minutes
// and one exchange. `aep-steer pair` and the console are separate processes, so a code waits as a
// file under <state>/pairing/ named by its SHA-256 (mode 600; the code itself is written nowhere);
// the exchange deletes the file, and only the exchange whose delete succeeds may pair, so two taps
// on one code pair one device. Failed exchanges are counted: past a bound in a minute every
// exchange is refused for a while, so guessing gets nowhere even at a code's full strength.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, rmSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { newSecret } from '../protocol/secret.js';
import { stateDir, writePrivateFile } from '../protocol/state-dir.js';
import type { DeviceRights } from './devices.js';

const PAIR_TTL_MS = 5 * 60_000;
const CODE_CHARS = 24;
const CODE_SHAPE = /^[A-Za-z0-9_-]{24}$/;

export interface PendingPair {
  rights: DeviceRights;
  /** The name given at `aep-steer pair --name`, offered on the phone's page. */
  name?: string;
  expiresAt: number;
}

export type PairTake =
  | { ok: true; pair: PendingPair }
  | { ok: false; status: number; code: 'pair-code-unknown' | 'pair-code-expired'; message: string };

export const pairingDir = (env: NodeJS.ProcessEnv = process.env): string => join(stateDir(env), 'pairing');

const fileOf = (dir: string, code: string): string =>
  join(dir, `${createHash('sha256').update(code, 'utf8').digest('hex')}.json`);

const UNKNOWN: PairTake = {
  ok: false,
  status: 404,
  code: 'pair-code-unknown',
  message:
    'This pairing code is not known: it was used already, or mistyped. Nothing was paired; run aep-steer pair again for a new code.',
};
const EXPIRED: PairTake = {
  ok: false,
  status: 410,
  code: 'pair-code-expired',
  message: 'This pairing code expired (codes last 5 minutes). Nothing was paired; run aep-steer pair again.',
};

export class PairingCodes {
  constructor(
    readonly dir: string,
    private readonly now: () => number = Date.now,
  ) {}

  /** A new code; expired ones are swept first, so the directory holds only live codes. */
  mint(rights: DeviceRights, name?: string, ttlMs = PAIR_TTL_MS): { code: string; expiresAt: number } {
    this.sweep();
    const code = newSecret(CODE_CHARS);
    const pending: PendingPair = { rights, expiresAt: this.now() + ttlMs, ...(name ? { name } : {}) };
    writePrivateFile(fileOf(this.dir, code), JSON.stringify(pending));
    return { code, expiresAt: pending.expiresAt };
  }

  /** What a code would pair, without spending it (the page a GET shows). */
  peek(code: string): PairTake {
    if (!CODE_SHAPE.test(code)) return UNKNOWN;
    const pending = this.read(fileOf(this.dir, code));
    if (pending === undefined) return UNKNOWN;
    return pending.expiresAt <= this.now() ? EXPIRED : { ok: true, pair: pending };
  }

  /** Spends a code: whoever deletes its file first has it; an expired one is spent and refused. */
  take(code: string): PairTake {
    if (!CODE_SHAPE.test(code)) return UNKNOWN;
    const path = fileOf(this.dir, code);
    const pending = this.read(path);
    if (pending === undefined) return UNKNOWN;
    try {
      unlinkSync(path);
    } catch {
      return UNKNOWN;
    }
    return pending.expiresAt <= this.now() ? EXPIRED : { ok: true, pair: pending };
  }

  private read(path: string): PendingPair | undefined {
    try {
      const p = JSON.parse(readFileSync(path, 'utf8')) as PendingPair;
      return typeof p.expiresAt === 'number' && typeof p.rights === 'string' ? p : undefined;
    } catch {
      return undefined;
    }
  }

  private sweep(): void {
    let files: string[];
    try {
      files = readdirSync(this.dir);
    } catch {
      return;
    }
    for (const f of files) {
      const p = this.read(join(this.dir, f));
      if (p === undefined || p.expiresAt <= this.now()) rmSync(join(this.dir, f), { force: true });
    }
  }
}

/** Failed exchanges allowed in a window before every exchange is refused until it passes. */
export class FailureLimit {
  private failures: number[] = [];

  constructor(
    private readonly max = 10,
    private readonly windowMs = 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Seconds until an exchange may be tried again; 0 when it may now. */
  blockedFor(): number {
    const since = this.now() - this.windowMs;
    this.failures = this.failures.filter((t) => t > since);
    if (this.failures.length < this.max) return 0;
    return Math.max(1, Math.ceil((this.failures[0]! - since) / 1000));
  }

  fail(): void {
    this.failures.push(this.now());
  }
}
