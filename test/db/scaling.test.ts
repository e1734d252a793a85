// db/SCALING.md's promise, checked in the catalog of a migrated database: every tenant table
// (one with an organization_id column, in app_public or app_private) can be distributed by
// organization_id. Its primary key leads with organization_id; every unique constraint or index
// and every exclusion constraint includes it; every foreign key to another tenant table carries
// it on both sides (and one to app_public.organizations is organization_id itself). The few
// tables that break the rule today are listed here by name, each with what must change before
// distribution (db/SCALING.md, "What must change"): a new one fails this test, and so does fixing
// one without taking it off the list.
import test from 'ava';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';

let db: TestDatabase;
test.before(async () => { db = await createTestDatabase(); });
test.after.always(async () => { await db?.drop(); });

const KNOWN: Record<string, string> = {
  'app_private.availability_changes primary key': 'a log with no key, pruned as a set; an unlogged cache\'s, local to one server',
  'app_private.analysts primary key': 'keyed by role name (roles are cluster-wide): a coordinator-local table',
  'app_private.api_keys unique index app_private.api_keys_key_hash_key': 'a key is found by its hash before its organization is known',
  'app_private.enrollment_counts primary key': 'append-only deltas with no key; distributed by organization_id as they are',
  'app_private.contact_counts primary key': 'append-only deltas with no key; distributed by organization_id as they are',
  'app_private.idempotency_keys primary key': 'keyed by credential; organization_id must lead the key',
  'app_private.unsubscribe_tokens primary key': 'an unsubscribe link carries only the token',
  'app_private.dashboard_links unique index app_private.dashboard_links_token_hash_key': 'a sign-in link carries only its token',
  'app_private.dashboard_sessions unique index app_private.dashboard_sessions_session_hash_key': 'a session cookie carries only its id',
  'app_private.delivery_events primary key': 'a provider\'s report is recorded once by its own id, before its organization is known',
  'app_private.delivery_events unique index app_private.delivery_events_event_key_key': 'the same: the provider\'s event id',
  'app_private.inbound_claims primary key': 'a sending domain or number belongs to one organization: unique across them all, and looked up before its organization is known',
  'app_private.voice_secrets primary key': 'a voice secret is found by its hash before its organization is known (a coordinator-local table)',
  'app_private.voice_secrets unique index app_private.voice_secrets_secret_hash_key': 'the same: the secret\'s hash',
  'app_public.chat_widgets unique index app_public.chat_widgets_id_key': 'a widget id routes a visitor\'s chat to one organization: unique across them all',
  'app_public.forms unique index app_public.forms_id_key': 'a form id routes a public post to one organization: unique across them all',
  'app_private.oauth_grants primary key': 'a token or refresh token is found by its hash before its organization is known',
  'app_private.oauth_requests primary key': 'an authorization request is found by its id from the consent page and the token endpoint',
  'app_private.outgoing_messages unique index app_private.outgoing_messages_provider_id': 'a provider\'s callback carries only its message id',
};

const VIOLATIONS = `
with tenant as (
  select c.oid, format('%I.%I', n.nspname, c.relname) as name,
         (select attnum from pg_attribute a where a.attrelid = c.oid and a.attname = 'organization_id' and not a.attisdropped) as org
    from pg_class c join pg_namespace n on n.oid = c.relnamespace
   where n.nspname in ('app_public', 'app_private') and c.relkind in ('r', 'p')
)
select t.name || ' primary key' as what
  from tenant t left join pg_constraint k on k.conrelid = t.oid and k.contype = 'p'
 where t.org is not null and (k.oid is null or k.conkey[1] <> t.org)
union all
select t.name || ' unique index ' || i.indexrelid::regclass
  from tenant t join pg_index i on i.indrelid = t.oid
 where t.org is not null and i.indisunique and not i.indisprimary and not (t.org = any(i.indkey::int2[]))
union all
select t.name || ' exclusion ' || k.conname
  from tenant t join pg_constraint k on k.conrelid = t.oid and k.contype = 'x'
 where t.org is not null and not (t.org = any(k.conkey))
union all
select t.name || ' foreign key ' || k.conname
  from tenant t join pg_constraint k on k.conrelid = t.oid and k.contype = 'f'
  join tenant r on r.oid = k.confrelid
 where (r.org is not null or r.name = 'app_public.organizations') and not (
       (r.name = 'app_public.organizations' and k.conkey = array[t.org])
    or (t.org = any(k.conkey) and r.org is not null and k.confkey[array_position(k.conkey, t.org)] = r.org))
order by 1`;

test('every tenant table\'s keys lead with or include organization_id, but the known exceptions', async (t) => {
  const { rows } = await db.owner.query(VIOLATIONS);
  t.deepEqual(rows.map((r) => r.what), Object.keys(KNOWN).sort());
});

test('the check sees what it checks: tenant tables, their unique indexes and their foreign keys', async (t) => {
  const { rows: [r] } = await db.owner.query(`
    select count(distinct c.oid)::int as tables,
           count(distinct k.oid) filter (where k.contype = 'f')::int as fks,
           (select count(*)::int from pg_index i join pg_class ic on ic.oid = i.indrelid
             where ic.relnamespace in ('app_public'::regnamespace, 'app_private'::regnamespace) and i.indisunique and not i.indisprimary) as uniques
      from pg_class c join pg_attribute a on a.attrelid = c.oid and a.attname = 'organization_id'
      left join pg_constraint k on k.conrelid = c.oid
     where c.relnamespace in ('app_public'::regnamespace, 'app_private'::regnamespace) and c.relkind = 'r'`);
  t.true(r.tables >= 30 && r.fks >= 40 && r.uniques >= 5, JSON.stringify(r));
  // a table breaking the rule is caught: one made here, in a rolled-back transaction
  const c = await db.owner.connect();
  try {
    await c.query('begin');
    await c.query(`create table app_public.scaling_probe (organization_id uuid not null, id uuid primary key,
      contact_id uuid, email text unique, foreign key (organization_id, contact_id) references app_public.contacts)`);
    await c.query(`create table app_public.scaling_probe2 (organization_id uuid not null, id uuid, contact_id uuid,
      primary key (organization_id, id), foreign key (contact_id, organization_id) references app_public.contacts (id, organization_id))`);
    const { rows } = await c.query(VIOLATIONS);
    t.deepEqual(rows.map((x) => x.what).filter((w) => w.includes('scaling_probe')), [
      'app_public.scaling_probe primary key',
      'app_public.scaling_probe unique index app_public.scaling_probe_email_key',
    ]);
  } finally {
    await c.query('rollback');
    c.release();
  }
});
