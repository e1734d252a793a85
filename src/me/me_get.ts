// me_get: what the calling credential is and may do.
import { z } from 'zod';
import { SCOPES } from '../auth/scopes.ts';
import { sql } from '../db/sql.ts';
import { defineOperation } from '../registry/operation.ts';

const uuid = z.uuid();
const KeyRole = z.enum(['MANAGER', 'MEMBER']).nullable();

const MeResponse = z.object({
  organization: z.object({ id: uuid, name: z.string() }),
  api_key: z.object({
    id: uuid,
    kind: z.enum(['personal', 'organization']),
    scopes: z.array(z.string()),
    role: KeyRole.describe('MANAGER or MEMBER; null for a key with no role'),
    location_ids: z.array(uuid).nullable().describe('null when the key reaches the whole organization'),
    powers: z.array(z.string()).nullable().describe('manager powers; null for a key with no role'),
  }).nullable().describe('null for an OAuth token'),
  oauth_client: z.object({
    client_id: z.string(),
    client_name: z.string().nullable(),
    scopes: z.array(z.string()),
  }).optional().describe('the OAuth client and the scopes its grant carries; present for an OAuth token'),
  principal: z.object({
    user_id: uuid,
    role: z.enum(['OWNER', 'ADMIN', 'MANAGER', 'MEMBER']),
    location_ids: z.array(uuid).nullable(),
  }).optional().describe('the person the credential acts for; absent for an organization key'),
  scopes_available: z.array(z.object({ scope: z.string(), label: z.string() })),
  rate_limit: z.object({
    limit: z.int().nullable().describe('requests per window per client address on each route; null when not limited'),
    window_seconds: z.int(),
  }),
});

export const meGet = defineOperation({
  operationId: 'me_get',
  method: 'GET',
  path: '/api/v1/me',
  tag: 'Whoami',
  summary: 'Describe the calling credential',
  description:
    'Returns the organization, the credential (scopes, role, locations, manager powers), the person it acts for, ' +
    'every scope with a label, and the rate limit. Needs no scope; call it first to learn what this credential may do.',
  scope: null,
  memberAccess: 'open',
  managerPower: null,
  response: MeResponse,
  run: {
    statement: () => sql`select o.id, o.name from app_public.organizations o
      where o.id = app_hidden.current_org_id()`,
    shape: ([org], { claims, config }) => {
      const personal = claims.kind === 'personal';
      return {
        organization: { id: String(org!.id), name: String(org!.name) },
        api_key: claims.oauth_client ? null : {
          id: claims.credential_id,
          kind: claims.kind,
          scopes: claims.scopes,
          role: claims.key_role,
          location_ids: claims.location_ids,
          powers: claims.key_role === 'MEMBER' ? [] : claims.powers,
        },
        ...(claims.oauth_client ? { oauth_client: claims.oauth_client } : {}),
        ...(personal && claims.user_id
          ? {
              principal: {
                user_id: claims.user_id,
                role: claims.role.toUpperCase() as 'OWNER' | 'ADMIN' | 'MANAGER' | 'MEMBER',
                location_ids: claims.location_ids,
              },
            }
          : {}),
        scopes_available: Object.entries(SCOPES).map(([scope, label]) => ({ scope, label })),
        rate_limit: { limit: config.rateLimit, window_seconds: 60 },
      };
    },
  },
});
