// appointments_availability: open slots of a location's day (SQL: app_public.appointments_availability,
// db/schema/appointments.sql).
import { z } from 'zod';
import { sql } from '../db/sql.ts';
import { defineOperation, type AnyOperation } from '../registry/operation.ts';
import { result, timestamp, uuid } from '../platform/schemas.ts';
import { CountryCode, LocalDate, PostalCode } from './booking-schemas.ts';

const AvailabilityQuery = z.object({
  location_id: uuid.describe('The location (locations_list)'),
  date: LocalDate.describe('The day, YYYY-MM-DD, in the location\'s time zone'),
  offering_id: uuid.optional().describe('Slots for this offering, at its length (locations_booking_options lists them)'),
  team_member_id: uuid.optional().describe('Only this team member\'s slots'),
  postal_code: PostalCode.optional().describe('A home visit: only team members whose territory covers this postal code'),
  country_code: CountryCode.optional().describe('ISO 3166-1 alpha-2 country of postal_code (default: the location\'s country)'),
  duration_minutes: z.coerce.number().int().min(5).max(1440).optional()
    .describe('Length of the slots in minutes when no offering_id is sent (default: the location\'s slot interval)'),
});

const Slot = z.object({ start: timestamp, end: timestamp });

export const Availability = z.object({
  location_id: uuid,
  date: z.string(),
  timezone: z.string(),
  offering_id: uuid.nullable(),
  duration_minutes: z.int(),
  slot_interval_minutes: z.int(),
  team_member_ids: z.array(uuid).describe('The team members considered (who do the offering, cover the postal code; or the one asked for), '
    + 'in the order a booking without team_member_id tries them; empty at a location that is not staffed'),
  calendar_ids: z.array(uuid).describe('At a location that is not staffed: its calendars, whose free time the slots are'),
  slots: z.array(Slot).describe('Starts where at least one of them is free for the whole length, earliest first'),
});

export const appointmentsAvailability = defineOperation({
  operationId: 'appointments_availability',
  method: 'GET',
  path: '/api/v1/appointments/availability',
  tag: 'Appointments',
  summary: 'Open slots of a day',
  description:
    'Lists the open slots of one day (`date`, in the location\'s time zone) at a location: starts spaced by the location\'s '
    + 'slot interval from each opening of its hours, where at least one team member who may take the booking is free for '
    + 'the whole length (the location\'s hours and the team member\'s working hours, less appointments and blocks). The length '
    + 'is the offering\'s (`offering_id`), else `duration_minutes`, else the slot interval. `team_member_id` narrows to one '
    + 'team member; `postal_code` (+ `country_code`) keeps only team members whose territory covers it (a home visit). At a '
    + 'location that is not staffed the slots are its calendars\' free time. Book one with appointments_create (without '
    + 'team_member_id, the first free team member takes it; ask with team_member_id for one person\'s slots). Slots that '
    + 'have already started are left out (asked for today, the rest of the day; for a past day, none). 404 for a '
    + 'location, offering or team member out of reach.',
  scope: 'appointments:read',
  memberAccess: 'scoped',
  managerPower: null,
  query: AvailabilityQuery,
  response: Availability,
  run: {
    // the day's grid (kept whole for the day), less the slots that have already started
    statement: (q) => sql`select app_hidden.slots_from_now(app_public.appointments_availability(${q.location_id}::uuid, ${q.date}::date,
      ${q.offering_id ?? null}::uuid, ${q.team_member_id ?? null}::uuid, ${q.postal_code ?? null}::text,
      ${q.country_code ?? null}::text, ${q.duration_minutes ?? null}::int)) as result`,
    shape: result,
  },
});

export const availabilityOperations: AnyOperation[] = [appointmentsAvailability];
