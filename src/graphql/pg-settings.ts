// The credential's claims as PostGraphile pgSettings: the role every request runs as plus the
// svc.* settings exactly as app_hidden.authenticate set them and answered them (`settings`).
// Policies read these settings and nothing else, so a GraphQL operation sees exactly the rows a
// REST call with the same key sees; a claim authenticate starts setting comes along unasked
// (test/graphql/graphql.test.ts checks the copy for every kind of key).
import type { ClaimSettings, Claims } from '../db/request.ts';

export type PgSettings = { role: 'svc_request' } & ClaimSettings;

export function pgSettingsFor(claims: Claims): PgSettings {
  return { ...claims.settings, role: 'svc_request' };
}
