// Where a clone of this project keeps the pinned vendor CLIs: scripts/install-vendor-cli.sh puts
// each into .vendor-clis/<vendor>/ with `npm --prefix` (AEP_VENDOR_CLIS_DIR moves the folder),
// never globally, so a binary there is not on PATH until the person puts it there. Doctor and the
// demo both look here; an installed package (npm install -g) has neither the folder nor the script.
import { accessSync, constants, existsSync, readFileSync, statSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The project root: the nearest folder above this module with a package.json. */
function projectRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    const up = dirname(dir);
    if (up === dir) return process.cwd();
    dir = up;
  }
}

function vendorClisDir(env: NodeJS.ProcessEnv = process.env): string {
  return env['AEP_VENDOR_CLIS_DIR'] || join(projectRoot(), '.vendor-clis');
}

/** The folder holding a pinned vendor's binaries, whether or not it was installed. */
export function pinnedBinDir(token: string, env: NodeJS.ProcessEnv = process.env): string {
  return join(vendorClisDir(env), token, 'node_modules', '.bin');
}

const executable = (path: string): boolean => {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
};

/** The pinned binary `bin` of `token`, when scripts/install-vendor-cli.sh put it there. */
export function pinnedCli(token: string, bin: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const path = join(pinnedBinDir(token, env), bin);
  return executable(path) ? path : undefined;
}

/** Where a shell started with `env` finds `bin`, as `command -v` would; undefined when it does not. */
export function onPath(bin: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const dir of (env['PATH'] ?? '').split(delimiter)) {
    if (dir === '') continue;
    const path = join(dir, bin);
    if (executable(path)) return path;
  }
  return undefined;
}

/** `scripts/install-vendor-cli.sh` by absolute path, when this is a clone and the script installs `token`. */
export function installScript(token: string): string | undefined {
  const script = join(projectRoot(), 'scripts', 'install-vendor-cli.sh');
  if (!existsSync(script)) return undefined;
  // Its usage names the vendors it pins as case branches (`  claude-code) pkg=…`).
  const branch = new RegExp(`^\\s*${token.replace(/[^A-Za-z0-9]/g, '\\$&')}\\)`, 'm');
  return branch.test(readFileSync(script, 'utf8')) ? script : undefined;
}

/** The shell line that puts `dir` first on PATH, quoted so a shell reads the path as written. */
export function pathLine(dir: string): string {
  return `export PATH="${dir.replace(/["$`\\]/g, '\\$&')}:$PATH"`;
}
