// The page server's defence against framing and injected script (console, inspect): the page may
// run only its own inline script and style, named by SHA-256, talk only to its own origin, and be
// framed by no page at all (a foreign page framing the console could trick a click on Send).
import { createHash } from 'node:crypto';

const hashOf = (text: string): string => `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;

/** The text of every inline `<tag>` element (attribute-less, as the pages write them). */
const inline = (html: string, tag: string): string[] =>
  [...html.matchAll(new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, 'g'))].map((m) => m[1]!);

const sources = (html: string, tag: string): string => {
  const hashes = inline(html, tag).map(hashOf);
  return hashes.length === 0 ? "'none'" : hashes.join(' ');
};

/** Headers for every answer of the page server: never framed, never sniffed. */
export const FRAME_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
});

/** The page's Content-Security-Policy: `default-src 'none'`, its own hashes, `frame-ancestors 'none'`. */
export function pagePolicy(html: string): string {
  return [
    "default-src 'none'",
    `script-src ${sources(html, 'script')}`,
    `style-src ${sources(html, 'style')}`,
    // The snapshot stream (`events`) and the actions (`api/…`) are the page's own origin.
    "connect-src 'self'",
    "img-src 'self'",
    // The console's web app manifest (an installed home-screen page) is its own origin too.
    "manifest-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}
