// Notes (spec: Contact note) and tags (spec: Tag): shared notes listed newest first, private
// ones only counted, idempotent add; tags created within the organization's limit.
import test from 'ava';
import { startWithTenant, type TestApp } from '../helpers/app.ts';
import { contactsFixture } from './helpers.ts';
import { rows } from '../helpers/sql.ts';
import { refusedWithoutWrites } from '../helpers/writes.ts';
import type { Applied } from '../../src/admin/fixture.ts';

let app: TestApp;
let acme: Applied;
test.before(async () => { ({ app, tenant: acme } = await startWithTenant(contactsFixture('Acme Dental', { tagLimit: 3 }))); });
test.after.always(async () => { await app?.close(); });

const notesPath = (id: string) => `/api/v1/contacts/${id}/notes`;
const addNote = (id: string, body: unknown, key = acme.keys.org) => app.request('POST', notesPath(id), { key, body });
const listNotes = (id: string, query = '', key = acme.keys.org) => app.request('GET', `${notesPath(id)}${query}`, { key });
const addTag = (id: string, body: unknown, key = acme.keys.org) => app.request('POST', `/api/v1/contacts/${id}/tags`, { key, body });
const removeTag = (id: string, tag: string, key = acme.keys.org) =>
  app.request('DELETE', `/api/v1/contacts/${id}/tags/${encodeURIComponent(tag)}`, { key });

const noteRows = async (contactId: string) =>
  rows(app, `select body, source from app_public.contact_notes where organization_id = $1 and contact_id = $2 order by created_at, id`,
    [acme.organization_id, contactId]);

// ---------------------------------------------------------------------------------------------
// Notes
// ---------------------------------------------------------------------------------------------

test.serial('a note is added with 201, shared, by the acting person, and counted', async (t) => {
  const res = await addNote(acme.ids.bob!, { body: 'Called about billing' }, acme.keys.owner_personal);
  t.is(res.status, 201, JSON.stringify(res.body));
  t.like(res.body, { contact_id: acme.ids.bob, body: 'Called about billing', source: 'user', author: { id: acme.ids.owner, name: 'Olive Owner' } });
  t.false(Number.isNaN(Date.parse(res.body.created_at)));
  const byOrgKey = await addNote(acme.ids.bob!, { body: 'From an integration key' });
  t.is(byOrgKey.status, 201);
  t.false('author' in byOrgKey.body, 'an organization key has no person behind it');
  const contact = await app.request('GET', `/api/v1/contacts/${acme.ids.bob}`, { key: acme.keys.org });
  t.is(contact.body.notes_count, 2);
});

test.serial('notes are listed newest first; location-private notes are not listed but counted', async (t) => {
  await rows(app, `insert into app_public.contact_notes (organization_id, contact_id, body, source, created_at)
    values ($1, $2, 'From the automation platform', 'integration', now() - interval '1 day'),
           ($1, $2, 'Written by the service', 'system', now() - interval '2 days')`, [acme.organization_id, acme.ids.ann]);
  const added = await addNote(acme.ids.ann!, { body: 'Newest note' });
  const res = await listNotes(acme.ids.ann!);
  t.is(res.status, 200);
  t.deepEqual(res.body.items.map((n: any) => n.body),
    ['Newest note', 'Prefers mornings', 'From the automation platform', 'Written by the service']);
  t.deepEqual(res.body.items[0], added.body);
  t.like(res.body, { total: 4, page: 1, limit: 25 });
  t.false(res.body.items.some((n: any) => n.body === 'Dashboard note'));
  const contact = await app.request('GET', `/api/v1/contacts/${acme.ids.ann}`, { key: acme.keys.org });
  t.is(contact.body.notes_count, 5, 'notes_count counts the private note too');
});

test.serial('notes paging: limit above 100 and a page past the last are 400', async (t) => {
  const id = acme.ids.cy!;
  for (let i = 0; i < 5; i++) await addNote(id, { body: `note ${i}` });
  const page2 = await listNotes(id, '?limit=2&page=2');
  t.deepEqual(page2.body.items.map((n: any) => n.body), ['note 2', 'note 1']);
  t.like(page2.body, { total: 5, page: 2, limit: 2 });
  t.is((await listNotes(id, '?limit=2&page=3')).body.items.length, 1);
  const past = await listNotes(id, '?limit=2&page=4');
  t.is(past.status, 400);
  t.is(past.body.error, 'bad_request');
  t.regex(past.body.message, /past the last/);
  t.is((await listNotes(id, '?limit=101')).status, 400);
  t.is((await listNotes(id, '?limit=100')).status, 200);
  t.is((await listNotes(id, '?page=0')).status, 400);
  const empty = await listNotes(acme.ids.phil!);
  t.is(empty.status, 200, 'the first page of no notes is an empty page');
  t.like(empty.body, { items: [], total: 0 });
  t.is((await listNotes(acme.ids.phil!, '?page=2')).status, 400);
});

test.serial('a note body is required, not blank, at most 20000 characters: 400 and nothing written', async (t) => {
  for (const body of [{}, { body: '' }, { body: '   ' }, { body: 'x'.repeat(20001) }, { body: 5 }, { body: 'ok', source: 'system' },
    { body: 'ok', idempotency_key: '' }, { body: 'ok', idempotency_key: 'k'.repeat(256) }]) {
    await refusedWithoutWrites(t, app, acme.organization_id, 400, 'bad_request', () => addNote(acme.ids.ann!, body));
  }
  await refusedWithoutWrites(t, app, acme.organization_id, 404, 'not_found',
    () => addNote('00000000-0000-4000-8000-000000000000', { body: 'ghost' }));
  await refusedWithoutWrites(t, app, acme.organization_id, 400, 'bad_request',
    () => app.request('POST', notesPath(acme.ids.ann!), { key: acme.keys.org, rawBody: '' }));
});

test.serial('adding a note is idempotent: the same key and body answer the first note, once', async (t) => {
  const id = acme.ids.dee!;
  const first = await addNote(id, { body: 'Only once', idempotency_key: 'note-key-1' });
  t.is(first.status, 201);
  const replay = await addNote(id, { body: 'Only once', idempotency_key: 'note-key-1' });
  t.is(replay.status, 201);
  t.deepEqual(replay.body, first.body);
  t.deepEqual(await noteRows(id), [{ body: 'Only once', source: 'user' }]);
  const concurrent = await Promise.all(Array.from({ length: 6 }, () => addNote(id, { body: 'Racing', idempotency_key: 'note-key-2' })));
  const created = concurrent.filter((r) => r.status === 201);
  t.true(created.length >= 1);
  t.true(concurrent.every((r) => r.status === 201 || (r.status === 409 && r.body.error === 'idempotency_in_progress')),
    JSON.stringify(concurrent.map((r) => [r.status, r.body.error])));
  t.is(new Set(created.map((r) => r.body.id)).size, 1);
  t.is((await noteRows(id)).filter((n) => n.body === 'Racing').length, 1);
});

test.serial('the same idempotency key with another body is 409 idempotency_key_reused and writes nothing', async (t) => {
  const id = acme.ids.eve!;
  const first = await addNote(id, { body: 'First body', idempotency_key: 'note-key-3' });
  t.is(first.status, 201);
  const res = await refusedWithoutWrites(t, app, acme.organization_id, 409, 'idempotency_key_reused',
    () => addNote(id, { body: 'Other body', idempotency_key: 'note-key-3' }));
  // the contact is part of the details
  await refusedWithoutWrites(t, app, acme.organization_id, 409, 'idempotency_key_reused',
    () => addNote(acme.ids.dee!, { body: 'First body', idempotency_key: 'note-key-3' }));
  const noKey = await addNote(id, { body: 'First body' });
  t.is(noKey.status, 201, 'without a key every call adds a note');
  t.not(noKey.body.id, first.body.id);
});

test.serial('notes are never edited or deleted: there is no such route', async (t) => {
  const note = await addNote(acme.ids.bob!, { body: 'Permanent' });
  for (const method of ['PATCH', 'PUT', 'DELETE']) {
    const res = await app.request(method, `${notesPath(acme.ids.bob!)}/${note.body.id}`, { key: acme.keys.org, body: { body: 'x' } });
    t.is(res.status, 404, method);
  }
});

// ---------------------------------------------------------------------------------------------
// Tags (this organization's tag limit is 3; the fixture holds one tag, vip)
// ---------------------------------------------------------------------------------------------

test.serial('adding a tag creates the organization\'s tag, is idempotent and answers the tag list', async (t) => {
  const res = await addTag(acme.ids.bob!, { name: 'Follow up' });
  t.is(res.status, 200, JSON.stringify(res.body));
  t.deepEqual(res.body, { contact_id: acme.ids.bob, tags: ['Follow up'] });
  const again = await addTag(acme.ids.bob!, { name: 'follow UP' });
  t.deepEqual(again.body.tags, ['Follow up'], 'tags are case-insensitive; the organization\'s spelling is kept');
  const vip = await addTag(acme.ids.bob!, { tag: 'VIP' });
  t.deepEqual(vip.body.tags, ['Follow up', 'vip']);
  const tags = await rows(app, `select name from app_public.tags where organization_id = $1 order by name`, [acme.organization_id]);
  t.deepEqual(tags.map((r) => r.name), ['Follow up', 'vip']);
  const { body } = await app.request('GET', `/api/v1/contacts/${acme.ids.bob}`, { key: acme.keys.org });
  t.deepEqual(body.tags, ['Follow up', 'vip']);
});

test.serial('the organization\'s tag limit answers 422 and writes nothing; existing tags still apply', async (t) => {
  t.is((await addTag(acme.ids.cy!, { name: 'third' })).status, 200);
  const res = await refusedWithoutWrites(t, app, acme.organization_id, 422, 'tag_limit_reached',
    () => addTag(acme.ids.cy!, { name: 'fourth' }));
  t.is((await addTag(acme.ids.cy!, { name: 'vip' })).status, 200, 'an existing tag is not a new one');
  const raced = await Promise.all(['a1', 'a2', 'a3', 'a4'].map((name) => addTag(acme.ids.dee!, { name })));
  t.true(raced.every((r) => r.status === 422));
  const n = await rows(app, `select count(*)::int as n from app_public.tags where organization_id = $1`, [acme.organization_id]);
  t.is(n[0].n, 3);
});

test.serial('tag names: at most 120 characters, not blank, one of name or tag', async (t) => {
  for (const body of [{}, { name: '' }, { name: '   ' }, { name: 'x'.repeat(121) }, { name: 'a', tag: 'a' }, { name: 5 }, { label: 'x' }]) {
    await refusedWithoutWrites(t, app, acme.organization_id, 400, 'bad_request', () => addTag(acme.ids.bob!, body));
  }
  await refusedWithoutWrites(t, app, acme.organization_id, 400, 'bad_request', () => removeTag(acme.ids.bob!, 'x'.repeat(121)));
  await refusedWithoutWrites(t, app, acme.organization_id, 404, 'not_found',
    () => addTag('00000000-0000-4000-8000-000000000000', { name: 'vip' }));
});

test.serial('removing a tag is idempotent, takes a URL-encoded name and keeps the organization\'s tag', async (t) => {
  await rows(app, `update app_public.organizations set tag_limit = 10 where id = $1`, [acme.organization_id]);
  const slashy = 'needs call/back & 100%';
  t.deepEqual((await addTag(acme.ids.phil!, { name: slashy })).body.tags, [slashy]);
  await addTag(acme.ids.phil!, { name: 'vip' });
  const res = await removeTag(acme.ids.phil!, slashy);
  t.is(res.status, 200, JSON.stringify(res.body));
  t.deepEqual(res.body, { contact_id: acme.ids.phil, tags: ['vip'] });
  const again = await removeTag(acme.ids.phil!, slashy);
  t.is(again.status, 200);
  t.deepEqual(again.body.tags, ['vip']);
  t.deepEqual((await removeTag(acme.ids.phil!, 'never-existed')).body.tags, ['vip']);
  t.deepEqual((await removeTag(acme.ids.phil!, 'VIP')).body.tags, [], 'case-insensitive');
  const kept = await rows(app, `select 1 from app_public.tags where organization_id = $1 and name = $2`, [acme.organization_id, slashy]);
  t.is(kept.length, 1);
  await refusedWithoutWrites(t, app, acme.organization_id, 404, 'not_found',
    () => removeTag('00000000-0000-4000-8000-000000000000', 'vip'));
});
