// appointments_create, appointments_update, appointments_reschedule, appointments_cancel. Each runs
// the SQL function of the same name (app_public.appointments_*): the booking rules and the
// roles are there, and the database's exclusion constraints decide races (409 slot_taken).
import { z } from 'zod';
import { sql } from '../db/sql.ts';
import { defineOperation, IdempotencyKey, type AnyOperation } from '../registry/operation.ts';
import { result, uuid } from '../platform/schemas.ts';
import { AppointmentPatch, EndTime, ServiceAddressInput, StartTime } from './booking-schemas.ts';
import { Appointment, AppointmentPath } from './schemas.ts';

const CreateBody = z.strictObject({
  location_id: uuid.optional().describe('A staffed location (locations_list); send this or calendar_id, not both'),
  calendar_id: uuid.optional().describe('A calendar of a location that is not staffed (calendars_list); sets the location'),
  offering_id: uuid.optional().describe('With location_id: the service; required where the location has offerings, and '
    + 'end_time - start_time must be its duration_minutes'),
  team_member_id: uuid.optional().describe('With location_id: who takes it; omitted = the first free team member who may '
    + '(a MEMBER: itself)'),
  service_address: ServiceAddressInput.optional().describe('With location_id: a home visit; its postal code must lie in a territory'),
  contact_id: uuid.describe('The contact the appointment is for (attendee details are taken from it)'),
  start_time: StartTime,
  end_time: EndTime,
  title: z.string().max(500).optional(),
});

const create = defineOperation({
  operationId: 'appointments_create',
  method: 'POST',
  path: '/api/v1/appointments',
  tag: 'Appointments',
  summary: 'Book an appointment',
  description:
    'Books a contact at a staffed location (`location_id`, optionally `team_member_id`, `offering_id`, `service_address`) '
    + 'or on a calendar of a location that is not staffed (`calendar_id`): exactly one of the two. Pick the time from '
    + 'appointments_availability first. Two bookings never overlap for a team member or a calendar: when the time was '
    + 'taken meanwhile the answer is 409 slot_taken for a named team member or a calendar, and 409 '
    + 'no_team_member_available when none was named and no eligible team member is free (ask for slots again). Other '
    + '409 codes: offering_required (the body carries booking_options), duration_mismatch, outside_hours, '
    + 'team_member_not_eligible, address_out_of_area. A MEMBER books only itself; a key without a role books only calendars. `idempotency_key` '
    + 'is required: a retry with the same key and details answers the first booking, other details 409. Answers 201.',
  scope: 'appointments:write',
  memberAccess: 'scoped',
  managerPower: null,
  changes: ['appointments'],
  idempotent: true,
  successStatus: 201,
  body: CreateBody,
  response: Appointment,
  run: {
    statement: (b) => sql`select app_public.appointments_create(${b.location_id ?? null}::uuid, ${b.calendar_id ?? null}::uuid,
      ${b.offering_id ?? null}::uuid, ${b.team_member_id ?? null}::uuid,
      ${b.service_address ? JSON.stringify(b.service_address) : null}::jsonb, ${b.contact_id}::uuid,
      ${b.start_time}::timestamptz, ${b.end_time}::timestamptz, ${b.title ?? null}::text) as result`,
    shape: result,
  },
});

// The key is optional on idempotent operations; a booking requires one (a retried booking must
// never book twice).
export const appointmentsCreate = { ...create, body: create.body!.extend({ idempotency_key: IdempotencyKey }) };

// Time and status are changed by their own operations: a body naming them is refused with the
// operation to use (other unknown fields: the usual message).
const ELSEWHERE: Record<string, string> = {
  start_time: 'appointments_reschedule', end_time: 'appointments_reschedule', status: 'appointments_cancel',
};
const UpdateBody = z.strictObject(AppointmentPatch, {
  error: (issue) => {
    if (issue.code !== 'unrecognized_keys') return undefined;
    const named = issue.keys.filter((k) => k in ELSEWHERE);
    return named.length
      ? `${named.join(', ')}: not changed by appointments_update; use ${[...new Set(named.map((k) => ELSEWHERE[k]))].join(' / ')}`
      : `unknown field${issue.keys.length > 1 ? 's' : ''}: ${issue.keys.join(', ')}`;
  },
}).refine((b) => Object.keys(b).length > 0, 'send at least one field to change');

export const appointmentsUpdate = defineOperation({
  operationId: 'appointments_update',
  method: 'PATCH',
  path: '/api/v1/appointments/{appointmentId}',
  tag: 'Appointments',
  summary: 'Change an appointment\'s details',
  description:
    'Changes the title, description (notes) and attendee details of an appointment; null clears a field. The time is '
    + 'changed by appointments_reschedule and the status by appointments_cancel (sending them here is 400). A repeating '
    + 'series answers 409 recurring_series_not_supported. Returns the appointment.',
  scope: 'appointments:write',
  memberAccess: 'scoped',
  managerPower: null,
  changes: ['appointments'],
  params: AppointmentPath,
  body: UpdateBody,
  response: Appointment,
  run: {
    statement: ({ appointmentId, ...patch }) =>
      sql`select app_public.appointments_update(${appointmentId}::uuid, ${JSON.stringify(patch)}::jsonb) as result`,
    shape: result,
  },
});

export const appointmentsReschedule = defineOperation({
  operationId: 'appointments_reschedule',
  method: 'POST',
  path: '/api/v1/appointments/{appointmentId}/reschedule',
  tag: 'Appointments',
  summary: 'Move an appointment',
  description:
    'Moves an appointment (or a block) to a new start and end, checked like a new booking of the same team member or '
    + 'calendar: inside the hours (outside_hours), the offering\'s length (duration_mismatch), free (slot_taken). 409 '
    + 'appointment_cancelled for a cancelled one, recurring_series_not_supported for a repeating series. Returns the appointment.',
  scope: 'appointments:write',
  memberAccess: 'scoped',
  managerPower: null,
  changes: ['appointments'],
  params: AppointmentPath,
  body: z.strictObject({ start_time: StartTime, end_time: EndTime }),
  response: Appointment,
  run: {
    statement: ({ appointmentId, start_time, end_time }) => sql`select app_public.appointments_reschedule(${appointmentId}::uuid,
      ${start_time}::timestamptz, ${end_time}::timestamptz) as result`,
    shape: result,
  },
});

export const appointmentsCancel = defineOperation({
  operationId: 'appointments_cancel',
  method: 'POST',
  path: '/api/v1/appointments/{appointmentId}/cancel',
  tag: 'Appointments',
  summary: 'Cancel an appointment',
  description:
    'Cancels an appointment (or a block) and frees its time; ask the user first. Cancelling a cancelled one answers it '
    + 'unchanged. A repeating series answers 409 recurring_series_not_supported. Returns the appointment.',
  scope: 'appointments:write',
  memberAccess: 'scoped',
  managerPower: null,
  confirm: true,
  changes: ['appointments'],
  params: AppointmentPath,
  response: Appointment,
  run: {
    statement: ({ appointmentId }) => sql`select app_public.appointments_cancel(${appointmentId}::uuid) as result`,
    shape: result,
  },
});

export const bookingOperations: AnyOperation[] = [appointmentsCreate, appointmentsUpdate, appointmentsReschedule, appointmentsCancel];
