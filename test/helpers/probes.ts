// Operations that exist only in tests: they exercise the request pipeline with every
// combination of registry flags while the areas that will use them are not live yet.
import { z } from 'zod';
import { sql } from '../../src/db/sql.ts';
import { notFound } from '../../src/platform/errors.ts';
import { defineOperation } from '../../src/registry/operation.ts';
import { meGet } from '../../src/me/me_get.ts';

const base = { tag: 'Probe', summary: 'probe', description: 'test-only', confirm: false, changes: [], idempotent: false } as const;
const ok = { statement: () => sql`select 1 as ok`, shape: () => ({ ok: true }) };

export const probeContactGet = defineOperation({
  ...base, operationId: 'probe_contact_get', method: 'GET', path: '/api/v1/probe/contacts/{contactId}',
  scope: 'contacts:read', memberAccess: 'scoped', managerPower: null,
  params: z.object({ contactId: z.uuid() }), response: z.any(),
  run: {
    statement: ({ contactId }) => sql`select id, name from app_public.contacts where id = ${contactId}::uuid`,
    shape: ([row]) => { if (!row) throw notFound('Contact'); return row; },
  },
});

export const probeLocationGet = defineOperation({
  ...base, operationId: 'probe_location_get', method: 'GET', path: '/api/v1/probe/locations/{locationId}',
  scope: 'appointments:read', memberAccess: 'scoped', managerPower: null,
  params: z.object({ locationId: z.uuid() }), response: z.any(),
  run: {
    statement: ({ locationId }) => sql`select id, name from app_public.locations where id = ${locationId}::uuid`,
    shape: ([row]) => { if (!row) throw notFound('Location'); return row; },
  },
});

export const probeWrite = defineOperation({
  ...base, operationId: 'probe_write', method: 'POST', path: '/api/v1/probe/write',
  scope: 'contacts:write', memberAccess: 'deny', managerPower: 'contacts',
  body: z.strictObject({ name: z.string().min(1) }), response: z.any(),
  run: { statement: ({ name }) => sql`select ${name}::text as name`, shape: ([row]) => row },
});

export const probeDenyNoPower = defineOperation({
  ...base, operationId: 'probe_deny', method: 'POST', path: '/api/v1/probe/deny',
  scope: 'audiences:write', memberAccess: 'deny', managerPower: null, response: z.any(), run: ok,
});

export const probeSms = defineOperation({
  ...base, operationId: 'probe_sms', method: 'POST', path: '/api/v1/probe/sms',
  scope: 'conversations:write', memberAccess: 'sms_setting', managerPower: 'contacts', response: z.any(), run: ok,
});

export const probeOpen = defineOperation({
  ...base, operationId: 'probe_open', method: 'GET', path: '/api/v1/probe/open',
  scope: 'sequences:read', memberAccess: 'open', managerPower: null,
  query: z.object({ page: z.coerce.number().int().min(1).default(1) }), response: z.any(),
  run: { statement: ({ page }) => sql`select ${page}::int as page`, shape: ([row]) => row },
});

export const probeThrow = defineOperation({
  ...base, operationId: 'probe_throw', method: 'GET', path: '/api/v1/probe/throw',
  scope: null, memberAccess: 'open', managerPower: null, response: z.any(),
  run: { handler: async () => { throw new Error('secret internal detail at /srv/app.ts:42'); } },
});

export const probeTx = defineOperation({
  ...base, operationId: 'probe_tx', method: 'GET', path: '/api/v1/probe/tx',
  scope: 'contacts:read', memberAccess: 'scoped', managerPower: null, response: z.any(),
  run: {
    handler: async (tx, { claims }) => {
      const [who] = await tx.query<{ role: string; org: string }>(
        sql`select current_user as role, app_hidden.current_org_id() as org`);
      const contacts = await tx.query<{ id: string }>(sql`select id from app_public.contacts order by id`);
      return { role: who!.role, org: who!.org, claims_org: claims.organization_id, contacts: contacts.map((c) => c.id) };
    },
  },
});

export const probeOperations = [meGet, probeContactGet, probeLocationGet, probeWrite, probeDenyNoPower, probeSms, probeOpen, probeThrow, probeTx];

/** An idempotent write with a visible effect: it queues an SMS (and its delivery job). */
export const probeQueue = defineOperation({
  ...base, operationId: 'probe_queue', method: 'POST', path: '/api/v1/probe/queue', successStatus: 201,
  scope: 'contacts:write', memberAccess: 'deny', managerPower: 'contacts', idempotent: true,
  body: z.strictObject({ to: z.string().min(1) }),
  response: z.any(),
  run: {
    statement: ({ to }) => sql`select app_hidden.queue_message('sms', ${to}::text, null, 'hello') as message_id`,
    shape: ([row]) => ({ message_id: row!.message_id, to: undefined }),
  },
});

export const probeIdempotentOperations = [...probeOperations, probeQueue];
