// The credential's claims as PostGraphile pgSettings: the role every request runs as plus the
// same svc.* settings, with the same text, that app_hidden.authenticate sets with set_config
// (migrations/committed/000001). Policies read these settings and nothing else, so a GraphQL
// operation sees exactly the rows a REST call with the same key sees. When authenticate
// starts setting another claim, it must be added here too (test/graphql.test.ts compares
// the two for every kind of key).
import type { Claims } from '../db/request.ts';

export type PgSettings = { role: 'svc_request' } & Record<`svc.${string}`, string>;

/** A PostgreSQL array literal, quoting elements the way array output does. */
function arrayLiteral(values: readonly string[]): string {
  const element = (v: string) =>
    v === '' || /^null$/i.test(v) || /[{}",\\\s]/.test(v) ? `"${v.replace(/["\\]/g, '\\$&')}"` : v;
  return `{${values.map(element).join(',')}}`;
}

export function pgSettingsFor(claims: Claims): PgSettings {
  return {
    role: 'svc_request',
    'svc.organization_id': claims.organization_id,
    'svc.credential_id': claims.credential_id,
    'svc.user_id': claims.user_id ?? '',
    'svc.role': claims.role,
    // null in the claims is the whole organization, which the setting spells '*'
    'svc.location_ids': claims.location_ids === null ? '*' : arrayLiteral(claims.location_ids),
    // authenticate returns powers only for managers but sets '{}' for everyone else
    'svc.powers': arrayLiteral(claims.powers ?? []),
    'svc.scopes': arrayLiteral(claims.scopes),
    'svc.records_level': claims.records_level,
    'svc.sms_enabled': String(claims.sms_enabled),
  };
}
