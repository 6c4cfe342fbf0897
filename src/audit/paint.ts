// Terminal colour for readable reports: only on a TTY and never when NO_COLOR is set (no-color.org).
export interface Paint {
  red(s: string): string;
  green(s: string): string;
  yellow(s: string): string;
  blue(s: string): string;
  dim(s: string): string;
  bold(s: string): string;
}

const wrap = (open: number, close: number) => (s: string) => `\u001b[${open}m${s}\u001b[${close}m`;

const COLOUR: Paint = {
  red: wrap(31, 39),
  green: wrap(32, 39),
  yellow: wrap(33, 39),
  blue: wrap(34, 39),
  dim: wrap(2, 22),
  bold: wrap(1, 22),
};
const same = (s: string): string => s;
const PLAIN: Paint = { red: same, green: same, yellow: same, blue: same, dim: same, bold: same };

export function paintFor(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): Paint {
  const noColor = env['NO_COLOR'] !== undefined && env['NO_COLOR'] !== '';
  return stream.isTTY === true && !noColor ? COLOUR : PLAIN;
}

export const plain: Paint = PLAIN;
