// What makes the console an installable home-screen page: a web app manifest and its icons
// (PNG at 192 and 512 pixels, drawn here so the project ships no binary files). The secret-path
// page registers no service worker: it is live or it is nothing, and a cached copy would show a
// stale queue. The paired device's page (/device/, device-page.ts) registers one for push
// notices only; it caches nothing either.
import { crc32, deflateSync } from 'node:zlib';

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'ascii');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])), 0);
  return Buffer.concat([head, data, crc]);
}

/** A square icon: the console's blue, a white ring and a dot (a waiting light), full bleed for maskable use. */
function iconPng(size: number): Buffer {
  const rows: Buffer[] = [];
  const mid = (size - 1) / 2;
  for (let y = 0; y < size; y++) {
    const row = Buffer.alloc(1 + size * 4);
    for (let x = 0; x < size; x++) {
      const r = Math.hypot(x - mid, y - mid) / size;
      const white = (r > 0.22 && r < 0.3) || r < 0.1;
      const at = 1 + x * 4;
      row[at] = white ? 255 : 0x2f;
      row[at + 1] = white ? 255 : 0x6f;
      row[at + 2] = white ? 255 : 0xdb;
      row[at + 3] = 255;
    }
    rows.push(row);
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(size, 0);
  ihdr.writeUInt32BE(size, 4);
  ihdr.set([8, 6, 0, 0, 0], 8);
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Buffer.concat([
    signature,
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(Buffer.concat(rows))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

/** Relative URLs: the manifest lives under the console's secret path, and so do start_url and scope. */
const MANIFEST = JSON.stringify({
  name: 'aep-steer console',
  short_name: 'aep-steer',
  description: 'Sessions waiting for you, their requests, and instructions to them',
  start_url: './',
  scope: './',
  display: 'standalone',
  background_color: '#f5f6f8',
  theme_color: '#2f6fdb',
  icons: [
    { src: 'icon-192.png', sizes: '192x192', type: 'image/png', purpose: 'any maskable' },
    { src: 'icon-512.png', sizes: '512x512', type: 'image/png', purpose: 'any maskable' },
  ],
});

/** The files the page server serves under the base path for the manifest. */
export function appFiles(): Record<string, { type: string; body: string | Buffer }> {
  return {
    'manifest.webmanifest': { type: 'application/manifest+json', body: MANIFEST },
    'icon-192.png': { type: 'image/png', body: iconPng(192) },
    'icon-512.png': { type: 'image/png', body: iconPng(512) },
  };
}
