// The shapes the appointments area answers with. app_hidden.appointment_json (migration
// 500-appointments-tables.sql) renders an appointment; these describe it for OpenAPI and MCP.
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
