// The shapes the appointments area answers with. app_hidden.appointment_json
// (db/schema/appointments.sql) renders an appointment; these describe it for OpenAPI and MCP.
import { z } from 'zod';
import { timestamp, uuid } from '../platform/schemas.ts';

export const AppointmentPath = z.object({ appointmentId: uuid.describe('The appointment\'s id (a repeating series\' id for its occurrences)') });

export const ServiceAddress = z.object({
  line1: z.string().nullish(),
  line2: z.string().nullish(),
  city: z.string().nullish(),
  region: z.string().nullish(),
  postal_code: z.string().nullish(),
  country_code: z.string().nullish().describe('ISO 3166-1 alpha-2'),
});

export const Appointment = z.object({
  id: uuid,
  kind: z.enum(['appointment', 'block']).describe('appointment: a booking for a contact; block: time off'),
  recurring: z.boolean().describe('true for an occurrence of a repeating series (the API cannot change the series)'),
  occurrence_start: timestamp.nullable().describe('For a repeating series: the start of this occurrence'),
  location_id: uuid,
  team_member_id: uuid.nullable(),
  calendar_id: uuid.nullable(),
  offering_id: uuid.nullable(),
  contact_id: uuid.nullable(),
  title: z.string().nullable(),
  description: z.string().nullable(),
  attendee_name: z.string().nullable(),
  attendee_phone: z.string().nullable(),
  attendee_email: z.string().nullable(),
  attendee_notes: z.string().nullable(),
  service_address: ServiceAddress.nullable(),
  start_time: timestamp,
  end_time: timestamp,
  status: z.enum(['booked', 'cancelled']),
  rrule: z.string().nullable(),
  recurrence_ends_on: z.string().nullable(),
  created_at: timestamp,
  updated_at: timestamp,
});

// ---------------------------------------------------------------------------------------------
// Locations and their booking resources (app_hidden.location_json, location_booking_options,
// territory_json, all in app_hidden)
// ---------------------------------------------------------------------------------------------
export const LocationPath = z.object({ locationId: uuid.describe('The location\'s id (from locations_list)') });

const Day = z.enum(['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun']);
export const Hours = z.array(z.object({ day: Day, open: z.string().describe('HH:MM'), close: z.string().describe('HH:MM, 24:00 for midnight') }))
  .describe('Weekly hours in the location\'s time zone');

export const Location = z.object({
  id: uuid,
  name: z.string(),
  timezone: z.string().describe('IANA time zone: availability dates and hours are in it'),
  staffed: z.boolean().describe('true: booked by location_id (and a team member); false: booked by calendar_id'),
  hours: Hours,
  slot_interval_minutes: z.int().describe('Spacing of the starts of offered slots'),
  address: ServiceAddress.nullable(),
});

export const Offering = z.object({
  id: uuid,
  name: z.string(),
  duration_minutes: z.int().describe('A booking of this offering lasts exactly this long'),
  team_member_ids: z.array(uuid).describe('Who does it, first free first'),
});

export const BookingOptions = z.object({
  location_id: uuid,
  timezone: z.string(),
  staffed: z.boolean(),
  slot_interval_minutes: z.int(),
  offerings: z.array(Offering).describe('When not empty, appointments_create needs one (offering_required)'),
  team_member_ids: z.array(uuid).describe('The location\'s team members, in the order "first free team member" follows'),
  team_members: z.array(z.object({ id: uuid, name: z.string(), working_hours: Hours })),
  calendars: z.array(z.object({ id: uuid, name: z.string() })).describe('What to book at a location that is not staffed'),
});

export const Territory = z.object({
  id: uuid,
  location_id: uuid,
  name: z.string(),
  country_code: z.string().describe('ISO 3166-1 alpha-2'),
  postal_codes: z.array(z.string()).describe('Normalized: spaces removed, upper case'),
  team_member_ids: z.array(uuid).describe('Who covers it'),
});

export const Calendar = z.object({ id: uuid, location_id: uuid, name: z.string() });
