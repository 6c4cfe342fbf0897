// The relay's live connections: WebSocket peers and SSE streams, each with the token it
// authenticated with. They are what a keep-alive pings, what a reload of the tokens file asks
// again (D39: a connection whose token lost or changed its rights is closed), and what a
// shutdown says goodbye to.
import type { ServerResponse } from 'node:http';
import type { AccessPolicy, Principal } from './acl.js';
import { samePrincipal } from './acl.js';
import { SocketConnection } from './socket.js';

type Held = { token: string | undefined; principal: Principal };

export class Connections {
  readonly sockets = new Set<SocketConnection>();
  /** Live SSE streams (a `live=0` replay never joins them). */
  readonly streams = new Set<ServerResponse>();
  /** D39: the token each live socket and SSE stream authenticated with, asked again on a reload. */
  private readonly held = new Map<SocketConnection | ServerResponse, Held>();

  addSocket(conn: SocketConnection, token: string | undefined, principal: Principal): void {
    this.sockets.add(conn);
    this.held.set(conn, { token, principal });
  }

  dropSocket(conn: SocketConnection): void {
    this.sockets.delete(conn);
    this.held.delete(conn);
  }

  /** An SSE response is held for revocation from the moment it is served, live or not. */
  holdStream(res: ServerResponse, token: string | undefined, principal: Principal): void {
    this.held.set(res, { token, principal });
  }

  /** An SSE response that closed, for whatever reason. */
  dropStream(res: ServerResponse): void {
    this.streams.delete(res);
    this.held.delete(res);
  }

  /** D39: new entries in force; every connection whose token lost or changed its rights is closed. */
  revoke(policy: AccessPolicy): void {
    for (const [conn, h] of this.held) {
      const now = policy.authenticate(h.token);
      if (now !== undefined && samePrincipal(now, h.principal)) continue;
      const detail =
        now === undefined
          ? `the token of ${h.principal.identity} was revoked (removed from the tokens file)`
          : `the rights of ${h.principal.identity} changed in the tokens file; reconnect to be served under them`;
      this.held.delete(conn);
      if (conn instanceof SocketConnection) {
        this.sockets.delete(conn);
        conn.revoke(detail);
      } else {
        this.streams.delete(conn);
        conn.end(`: revoked ${detail}\n\n`);
      }
    }
  }

  /** Keep-alive: WS `ping` frames and SSE `: ping` comments. */
  ping(): void {
    for (const s of this.sockets) s.ping();
    for (const r of this.streams) r.write(': ping\n\n');
  }
}
