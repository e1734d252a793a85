// locations_list, locations_booking_options, territories_list, calendars_list: what each answers,
// reach across organizations and locations (an id elsewhere is 404), the scope, and MCP.
import test from 'ava';
import type { Applied } from '../../src/admin/fixture.ts';
import type { TestApp } from '../helpers/app.ts';
import { withMcpClient } from '../helpers/mcp.ts';
import { startBookingApp, teamMember } from './reads-helpers.ts';

let app: TestApp;
let acme: Applied;
let other: Applied;
test.before(async () => { ({ app, acme, other } = await startBookingApp()); });
test.after.always(async () => { await app?.close(); });

const get = (key: string, path: string) => app.request('GET', path, { key });
const names = (res: { body: { items: { name: string }[] } }) => res.body.items.map((i) => i.name);

test('locations_list: the locations in reach, by name, with zone, hours, slot interval and address', async (t) => {
  const all = await get(acme.keys.org!, '/api/v1/locations');
  t.is(all.status, 200);
  t.deepEqual(names(all), ['London', 'North', 'South']);
  t.like(all.body, { total: 3, page: 1, limit: 25 });
  t.deepEqual(all.body.items.find((l: any) => l.name === 'North'), {
    id: acme.ids.north, name: 'North', timezone: 'America/New_York', staffed: true, slot_interval_minutes: 15,
    hours: ['mon', 'tue', 'wed', 'thu', 'fri'].map((day) => ({ day, open: '09:00', close: '17:00' })),
    address: { line1: '1 Main St', city: 'Albany', region: 'NY', postal_code: '12207', country_code: 'US' },
  });
  t.like(all.body.items.find((l: any) => l.name === 'London'), { staffed: false, timezone: 'Europe/London', slot_interval_minutes: 30 });
  t.deepEqual(names(await get(acme.keys.north_mgr!, '/api/v1/locations')), ['North']);
  t.deepEqual(names(await get(acme.keys.sam_personal!, '/api/v1/locations')), ['North']);
  t.deepEqual(names(await get(acme.keys.nia_personal!, '/api/v1/locations')), ['North']);
  t.deepEqual(names(await get(acme.keys.london_member!, '/api/v1/locations')), ['London']);
  t.deepEqual(names(await get(acme.keys.weak_mgr_personal!, '/api/v1/locations')), ['South']);
  const theirs = await get(other.keys.org!, '/api/v1/locations');
  t.deepEqual(theirs.body.items.map((l: any) => l.id).sort(), [other.ids.london, other.ids.north, other.ids.south].sort());
  const paged = await get(acme.keys.org!, '/api/v1/locations?limit=1&page=2');
  t.deepEqual(names(paged), ['North']);
  t.like(paged.body, { total: 3, page: 2, limit: 1 });
});

test('locations_booking_options: offerings with duration and who does them, team members in order, calendars', async (t) => {
  const [mgr, staff, nia] = ['mgr', 'staff', 'nia'].map((r) => teamMember(acme, r));
  const north = await get(acme.keys.org!, `/api/v1/locations/${acme.ids.north}/booking-options`);
  t.is(north.status, 200);
  t.like(north.body, { location_id: acme.ids.north, timezone: 'America/New_York', staffed: true, slot_interval_minutes: 15, calendars: [] });
  t.deepEqual(north.body.offerings, [
    { id: acme.ids.checkup, name: 'Checkup', duration_minutes: 60, team_member_ids: [mgr, staff, nia] },
    { id: acme.ids.cleaning, name: 'Cleaning', duration_minutes: 30, team_member_ids: [staff, nia] },
  ]);
  // the inactive ivy is no team member; order = oldest staff profile first (file order)
  t.deepEqual(north.body.team_member_ids, [mgr, staff, nia]);
  t.deepEqual(north.body.team_members.map((m: any) => m.name), ['Max Manager', 'Sam Staff', 'Nia Own']);
  // working hours absent: the location's
  t.deepEqual(north.body.team_members[1].working_hours, ['mon', 'tue', 'wed', 'thu', 'fri'].map((day) => ({ day, open: '09:00', close: '17:00' })));
  t.deepEqual(north.body.team_members[2].working_hours[0], { day: 'mon', open: '10:00', close: '16:00' });
  const london = await get(acme.keys.london_member!, `/api/v1/locations/${acme.ids.london}/booking-options`);
  t.is(london.status, 200);
  t.like(london.body, { staffed: false, offerings: [], team_member_ids: [], team_members: [],
    calendars: [{ id: acme.ids.room, name: 'Consult room' }, { id: acme.ids.desk, name: 'Front desk' }] });
  const south = await get(acme.keys.weak_mgr_personal!, `/api/v1/locations/${acme.ids.south}/booking-options`);
  t.deepEqual(south.body.team_member_ids, [teamMember(acme, 'weak_mgr'), teamMember(acme, 'quiet')]);
});

test('locations_booking_options: another organization\'s or another location\'s location is 404', async (t) => {
  for (const [key, id] of [[acme.keys.org!, other.ids.north!], [other.keys.org!, acme.ids.north!], [acme.keys.north_mgr!, acme.ids.london!],
    [acme.keys.london_member!, acme.ids.north!], [acme.keys.sam_personal!, acme.ids.south!], [acme.keys.org!, '00000000-0000-4000-8000-000000000000']] as const) {
    const res = await get(key, `/api/v1/locations/${id}/booking-options`);
    t.is(res.status, 404, id);
    t.is(res.body.error, 'not_found');
  }
  t.is((await get(acme.keys.org!, '/api/v1/locations/north/booking-options')).status, 400);
});

test('territories_list: by name, with who covers each; by location, postal code (spaces and case ignored) and country', async (t) => {
  const all = await get(acme.keys.org!, '/api/v1/territories');
  t.deepEqual(names(all), ['Central', 'Metro', 'Suburbs']);
  t.deepEqual(all.body.items[1], { id: acme.ids.metro, location_id: acme.ids.north, name: 'Metro', country_code: 'US',
    postal_codes: ['12207', '12208'], team_member_ids: [teamMember(acme, 'staff')] });
  t.deepEqual(all.body.items[2].team_member_ids, ['mgr', 'staff', 'nia'].map((r) => teamMember(acme, r)));
  t.deepEqual(all.body.items[0].postal_codes, ['SW1A1AA', 'WC2N5HR']);
  t.deepEqual(names(await get(acme.keys.org!, `/api/v1/territories?location_id=${acme.ids.north}`)), ['Metro', 'Suburbs']);
  t.deepEqual(names(await get(acme.keys.org!, '/api/v1/territories?postal_code=sw1a%201aa')), ['Central']);
  t.deepEqual(names(await get(acme.keys.org!, '/api/v1/territories?postal_code=12207&country_code=us')), ['Metro']);
  t.deepEqual(names(await get(acme.keys.org!, '/api/v1/territories?postal_code=12207&country_code=GB')), []);
  t.deepEqual(names(await get(acme.keys.org!, '/api/v1/territories?country_code=GB')), ['Central']);
  t.deepEqual(names(await get(acme.keys.north_mgr!, '/api/v1/territories')), ['Metro', 'Suburbs']);
  t.deepEqual(names(await get(acme.keys.london_member!, '/api/v1/territories')), ['Central']);
  t.deepEqual(names(await get(acme.keys.weak_mgr_personal!, '/api/v1/territories')), []);
  const theirs = await get(other.keys.org!, '/api/v1/territories');
  t.false(theirs.body.items.some((i: any) => Object.values(acme.ids).includes(i.id)));
});

test('calendars_list: by name, by location; reach', async (t) => {
  const all = await get(acme.keys.org!, '/api/v1/calendars');
  t.deepEqual(all.body.items, [
    { id: acme.ids.room, location_id: acme.ids.london, name: 'Consult room' },
    { id: acme.ids.desk, location_id: acme.ids.london, name: 'Front desk' },
  ]);
  t.deepEqual(names(await get(acme.keys.org!, `/api/v1/calendars?location_id=${acme.ids.north}`)), []);
  t.deepEqual(names(await get(acme.keys.london_member!, '/api/v1/calendars')), ['Consult room', 'Front desk']);
  t.deepEqual(names(await get(acme.keys.north_mgr!, '/api/v1/calendars')), []);
  t.deepEqual(names(await get(acme.keys.nia_personal!, '/api/v1/calendars')), []);
  const theirs = await get(other.keys.org!, '/api/v1/calendars');
  t.deepEqual(theirs.body.items.map((c: any) => c.id).sort(), [other.ids.desk, other.ids.room].sort());
});

test('a location_id filter out of reach is 404; a malformed one 400', async (t) => {
  for (const path of ['/api/v1/territories', '/api/v1/calendars']) {
    for (const [key, id] of [[acme.keys.org!, other.ids.london!], [acme.keys.north_mgr!, acme.ids.london!], [acme.keys.london_member!, acme.ids.north!]] as const) {
      const res = await get(key, `${path}?location_id=${id}`);
      t.is(res.status, 404, `${path} ${id}`);
      t.is(res.body.error, 'not_found');
    }
    const bad = await get(acme.keys.org!, `${path}?location_id=north`);
    t.is(bad.status, 400);
    t.regex(bad.body.message, /query\.location_id/);
  }
  const country = await get(acme.keys.org!, '/api/v1/territories?country_code=USA');
  t.is(country.status, 400);
});

test('without appointments:read: 403 insufficient_scope; with it alone: allowed', async (t) => {
  for (const path of ['/api/v1/locations', `/api/v1/locations/${acme.ids.north}/booking-options`, '/api/v1/territories', '/api/v1/calendars']) {
    const res = await get(acme.keys.org_reader!, path);
    t.is(res.status, 403, path);
    t.like(res.body, { error: 'insufficient_scope', required: 'appointments:read' });
    t.is((await get(acme.keys.appt_reader!, path)).status, 200, path);
  }
});

test('MCP: the resource tools answer as REST does', async (t) => {
  const json = (res: any) => JSON.parse(res.content[0].text);
  await withMcpClient(app, acme.keys.north_mgr!, async (c) => {
    const tools = (await c.listTools()).tools.map((x) => x.name);
    for (const name of ['locations_list', 'locations_booking_options', 'territories_list', 'calendars_list', 'appointments_list', 'appointments_get']) {
      t.true(tools.includes(name), name);
    }
    const options = await c.callTool({ name: 'locations_booking_options', arguments: { locationId: acme.ids.north } });
    t.deepEqual(json(options), (await get(acme.keys.north_mgr!, `/api/v1/locations/${acme.ids.north}/booking-options`)).body);
    const hidden = await c.callTool({ name: 'locations_booking_options', arguments: { locationId: acme.ids.london } });
    t.true(hidden.isError);
    t.like(json(hidden), { statusCode: 404 });
    const territories = await c.callTool({ name: 'territories_list', arguments: { postal_code: '12303' } });
    t.deepEqual(json(territories).items.map((i: any) => i.name), ['Suburbs']);
  });
});
