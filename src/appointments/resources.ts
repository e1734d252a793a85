// locations_list, locations_booking_options, territories_list, calendars_list: what a caller
// needs before it looks for slots or books. Each runs the SQL function of the same name
// (app_public.locations_list, …; db/schema/appointments.sql); a location elsewhere (another
// organization, or outside a location-limited credential's reach) answers 404.
import { z } from 'zod';
import { sql } from '../db/sql.ts';
import { defineOperation } from '../registry/operation.ts';
import { Page, paging, result, uuid } from '../platform/schemas.ts';
import { BookingOptions, Calendar, Location, LocationPath, Territory } from './schemas.ts';

const read = { tag: 'Appointments', scope: 'appointments:read' as const, memberAccess: 'scoped' as const, managerPower: null, method: 'GET' as const };
const LocationFilter = uuid.optional().describe('Only this location\'s (from locations_list); 404 when out of reach');

export const locationsList = defineOperation({
  ...read,
  operationId: 'locations_list',
  path: '/api/v1/locations',
  summary: 'List locations',
  description:
    'Lists the locations the credential reaches, by name, with each one\'s time zone, opening hours, slot interval and '
    + 'whether it is staffed. A staffed location is booked with location_id (and a team member); one that is not is '
    + 'booked through one of its calendars (calendars_list). Next: locations_booking_options for what a booking there needs.',
  query: z.object(paging),
  response: Page(Location),
  run: {
    statement: ({ page, limit }) => sql`select app_public.locations_list(${page}::int, ${limit}::int) as result`,
    shape: result,
  },
});

export const locationsBookingOptions = defineOperation({
  ...read,
  operationId: 'locations_booking_options',
  path: '/api/v1/locations/{locationId}/booking-options',
  summary: 'What a booking at a location needs',
  description:
    'The location\'s offerings (each with its duration_minutes and the team members who do it), its team members (the '
    + 'team_member_id values appointments_availability and appointments_create take, with working hours), and its '
    + 'calendars. When offerings is not empty, a booking must name one. 404 when the location is out of reach.',
  params: LocationPath,
  response: BookingOptions,
  run: {
    statement: ({ locationId }) => sql`select app_public.locations_booking_options(${locationId}::uuid) as result`,
    shape: result,
  },
});

export const territoriesList = defineOperation({
  ...read,
  operationId: 'territories_list',
  path: '/api/v1/territories',
  summary: 'List territories',
  description:
    'Lists the territories (postal codes a location\'s team members visit for home visits) in reach, by name, with who '
    + 'covers each. `postal_code` (spaces and case ignored) keeps those that cover it, `country_code` those of one country.',
  query: z.object({
    ...paging,
    location_id: LocationFilter,
    postal_code: z.string().trim().min(1).max(20).optional().describe('Only territories covering it'),
    country_code: z.string().regex(/^[A-Za-z]{2}$/, 'an ISO 3166-1 alpha-2 code').optional().describe('ISO 3166-1 alpha-2')
      .meta({ examples: ['US', 'GB'] }),
  }),
  response: Page(Territory),
  run: {
    statement: ({ location_id, postal_code, country_code, page, limit }) => sql`select app_public.territories_list(
      ${location_id ?? null}::uuid, ${postal_code ?? null}::text, ${country_code ?? null}::text, ${page}::int, ${limit}::int) as result`,
    shape: result,
  },
});

export const calendarsList = defineOperation({
  ...read,
  operationId: 'calendars_list',
  path: '/api/v1/calendars',
  summary: 'List calendars',
  description:
    'Lists the calendars in reach, by name. A calendar is what a location that is not staffed books instead of a person: '
    + 'pass its id as calendar_id to appointments_create; it is open during its location\'s hours and busy while booked.',
  query: z.object({ ...paging, location_id: LocationFilter }),
  response: Page(Calendar),
  run: {
    statement: ({ location_id, page, limit }) =>
      sql`select app_public.calendars_list(${location_id ?? null}::uuid, ${page}::int, ${limit}::int) as result`,
    shape: result,
  },
});

export const resourceOperations = [locationsList, locationsBookingOptions, territoriesList, calendarsList];
