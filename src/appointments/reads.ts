// appointments_list and appointments_get. Each runs the SQL function of the same name
// (app_public.appointments_list, app_public.appointments_get) under the policies of
// app_public.appointments: another location's appointment is absent
// (404), and an own-records MEMBER sees only those where it is the team member.
import { z } from 'zod';
import { sql } from '../db/sql.ts';
import { defineOperation } from '../registry/operation.ts';
import { Page, paging, result, uuid } from '../platform/schemas.ts';
import { Appointment, AppointmentPath } from './schemas.ts';

const read = { tag: 'Appointments', scope: 'appointments:read' as const, memberAccess: 'scoped' as const, managerPower: null, method: 'GET' as const };
const instant = z.iso.datetime({ offset: true });

export const appointmentsList = defineOperation({
  ...read,
  operationId: 'appointments_list',
  path: '/api/v1/appointments',
  summary: 'List appointments',
  description:
    'Lists the booked appointments that start in the window [from, to), earliest first: `from` defaults to now, `to` to '
    + '30 days after `from`, and the window may be at most 92 days (400 otherwise). A repeating appointment appears once '
    + 'per occurrence, each with the series id as `id`, `recurring: true` and its `occurrence_start`. Cancelled '
    + 'appointments and blocks (time off) are left out. `contact_id` keeps the contact\'s bookings and those whose '
    + 'attendee phone or email is the contact\'s (404 for a contact out of reach). A location-limited credential sees its '
    + 'locations\' appointments; a MEMBER at the own-records level only its own.',
  query: z.object({
    ...paging,
    from: instant.optional().describe('Start of the window (ISO 8601 with offset); default now')
      .meta({ examples: ['2030-03-04T00:00:00-05:00'] }),
    to: instant.optional().describe('End of the window, excluded; default 30 days after from, at most 92 days after it')
      .meta({ examples: ['2030-04-01T00:00:00-04:00'] }),
    contact_id: uuid.optional().describe('Only this contact\'s bookings, by id or by attendee phone or email'),
  }),
  response: Page(Appointment).extend({ from: z.string().describe('The window\'s start'), to: z.string().describe('The window\'s end') }),
  run: {
    statement: ({ from, to, contact_id, page, limit }) => sql`select app_public.appointments_list(${from ?? null}::timestamptz,
      ${to ?? null}::timestamptz, ${contact_id ?? null}::uuid, ${page}::int, ${limit}::int) as result`,
    shape: result,
  },
});

export const appointmentsGet = defineOperation({
  ...read,
  operationId: 'appointments_get',
  path: '/api/v1/appointments/{appointmentId}',
  summary: 'Read an appointment',
  description:
    'Returns one appointment, cancelled ones included (`status`), or a block (`kind: block`, time off). For a repeating '
    + 'series\' id: the series (`recurring: true`, `rrule`, its first start); the API cannot change a series. 404 when '
    + 'absent or out of reach.',
  params: AppointmentPath,
  response: Appointment,
  run: {
    statement: ({ appointmentId }) => sql`select app_public.appointments_get(${appointmentId}::uuid) as result`,
    shape: result,
  },
});

export const readOperations = [appointmentsList, appointmentsGet];
