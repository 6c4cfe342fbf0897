// Baseline server: a bare Node HTTP server that reads the body and replies `{}`, the floor of
// any hook round trip on loopback.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { answer, serveUntilStopped } from '../lib/proc.js';

const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    if (req.url === '/stats') {
      // The same CPU report as the adapter's control port, so CPU per round trip compares too.
      const cpu = process.cpuUsage();
      const body = JSON.stringify({ cpuMs: (cpu.user + cpu.system) / 1000 });
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': 2 }).end('{}');
  });
});
server.listen(0, '127.0.0.1', () => {
  const port = (server.address() as AddressInfo).port;
  answer({
    url: `http://127.0.0.1:${port}/hook/bench-secret-0123456789`,
    injectUrl: `http://127.0.0.1:${port}/inject`,
    statsUrl: `http://127.0.0.1:${port}/stats`,
  });
});
serveUntilStopped(() => new Promise<void>((r) => server.close(() => r())));
