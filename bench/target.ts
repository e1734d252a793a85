// A server to measure, in its own process so the load generator does not share its event
// loop: `svc` is the real app without rate limiting, `svc-limited` the same with it; `bare` is
// express + pg doing the same primary-key lookup with no authentication, claims or RLS: the
// baseline.
import express from 'express';
import pg from 'pg';
import { loadConfig } from '../src/config.ts';
import { createApp } from '../src/http/app.ts';
import { AREAS } from '../src/areas.ts';
import { operationsOf, pagesOf } from '../src/registry/area.ts';

const operations = operationsOf(AREAS);
import { listen } from '../src/server.ts';
import { createRequestPool } from '../src/db/request.ts';
import { RateLimiter, postgresWindowStore } from '../src/http/rate-limit.ts';

const [kind, ownerUrl, loginUrl, orgId] = process.argv.slice(2) as [string, string, string, string];
const POOL = Number(process.env.BENCH_POOL || 20);

let app: express.Express;
if (kind === 'svc' || kind === 'svc-limited') {
  const pool = createRequestPool(loginUrl, { max: POOL });
  // The limited target counts every request against a limit it never reaches, so the
  // difference between the two is the limiter's own cost.
  const limiter = kind === 'svc-limited' ? new RateLimiter({ limit: 1e9, store: postgresWindowStore(pool) }) : undefined;
  app = createApp({ pool, config: loadConfig(), operations, pages: pagesOf(AREAS), limiter });
} else {
  const pool = new pg.Pool({ connectionString: ownerUrl, max: POOL });
  app = express();
  app.get('/bare/org', async (_req, res) => {
    const { rows } = await pool.query('select id, name from app_public.organizations where id = $1', [orgId]);
    res.json({ organization: rows[0] });
  });
  // a contact by its primary key, whole, as contacts_get reads one (its baseline in bench:contacts)
  app.get('/bare/contacts/:id', async (req, res) => {
    const { rows } = await pool.query('select * from app_public.contacts where organization_id = $1 and id = $2', [orgId, req.params.id]);
    res.json(rows[0] ?? null);
  });
  // Floors for bench:contacts: the least any exact answer to a search or an audience count
  // must do, as the owner in one statement (no authentication, policies, page or rendering).
  // An exact total of the contacts whose search text holds q, through the trigram index.
  app.get('/bare/floor/q-count', async (req, res) => {
    const { rows } = await pool.query(`select count(*)::int as total from app_public.contacts c
      where c.organization_id = $1 and app_hidden.contact_search_text(c.name, c.email, c.phone) ilike app_hidden.like_anywhere($2)`,
    [orgId, String(req.query.q ?? '')]);
    res.json(rows[0]);
  });
  // An exact count of the contacts with total_calls above k, read from a table holding nothing
  // but the organization and that column (bench_floor_calls, which bench:contacts builds).
  app.get('/bare/floor/calls-count', async (req, res) => {
    const { rows } = await pool.query('select count(*)::int as total from public.bench_floor_calls where organization_id = $1 and total_calls > $2',
      [orgId, Number(req.query.gt ?? 0)]);
    res.json(rows[0]);
  });
  // one appointment written as appointments_create writes it (the contact's details copied, the
  // table's constraints, indexes and triggers as they are), with no authentication, policies,
  // booking checks or idempotency record: the floor a booking stands on (bench:appointments)
  app.post('/bare/appointments', express.json(), async (req, res) => {
    const b = req.body as Record<string, string>;
    const { rows } = await pool.query(`insert into app_public.appointments (organization_id, kind, location_id, staff_profile_id,
        offering_id, contact_id, attendee_name, attendee_phone, attendee_email, starts_at, ends_at, source)
      select $1, 'appointment', $2, $3, $4, c.id, c.name, c.phone, c.email, $6, $7, 'api'
        from app_public.contacts c where c.organization_id = $1 and c.id = $5
      returning *`, [orgId, b.location_id, b.team_member_id, b.offering_id, b.contact_id, b.start_time, b.end_time]);
    res.status(201).json(rows[0] ?? null);
  });
}
const server = await listen(app, 0, '127.0.0.1');
const address = server.address();
process.send!({ port: typeof address === 'object' && address ? address.port : 0 });
process.on('SIGINT', () => process.exit(0));
// The parent asks for this process's CPU time around a measurement: CPU per request is far
// steadier than requests/s on a shared machine.
process.on('message', (m) => {
  if (m === 'cpu') process.send!({ cpu: process.cpuUsage() });
});
