// D47: `GET /audit/rows?part=rows|gone|checkpoints|heads&after=CURSOR`, a page of what a remote
// `aep-steer audit --verify --relay URL` checks. Rows are served whole, at full capture, so only
// an identity with the `audit` right (the shared token has it) may read them.
import type { Principal } from './acl.js';
import { AUDIT_PARTS, type AuditPart } from './audit-rows.js';
import { json, type Res } from './http-reply.js';
import type { SessionStore } from './session-store.js';

export async function auditRows(store: SessionStore, url: URL, principal: Principal, res: Res): Promise<void> {
  if (principal.audit !== true)
    return json(res, 403, {
      error: 'unauthorized',
      detail: `${principal.identity} may not read the store's rows (they are served at full capture); add "audit": true to its entry in the relay's tokens file, or use the relay's --token`,
    });
  if (store.auditPage === undefined)
    return json(res, 501, {
      error: 'unsupported',
      detail: `this relay's store (${store.path}) keeps no hash chain a remote verify can read yet; verify its adapters' logs with aep-steer audit --verify LOG`,
    });
  const part = url.searchParams.get('part') ?? 'rows';
  if (!(AUDIT_PARTS as readonly string[]).includes(part))
    return json(res, 400, { error: 'invalid-audit-page', detail: `part must be one of ${AUDIT_PARTS.join(', ')}` });
  const page = await store.auditPage(part as AuditPart, url.searchParams.get('after'));
  if (page === undefined)
    return json(res, 400, {
      error: 'invalid-audit-page',
      detail: 'after is not a cursor this relay gave for that part; start again without it',
    });
  json(res, 200, page);
}
