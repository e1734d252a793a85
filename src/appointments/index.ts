// The appointments area: a location's booking resources (offerings, territories, calendars,
// team members' hours), open slots, and race-free booking.
import type { Area } from '../registry/area.ts';
import { availabilityOperations } from './availability.ts';
import { availabilityPrune, availabilityPruneCron } from './availability_prune.ts';
import { bookingOperations } from './booking.ts';
import { appointmentsFixture } from './fixture.ts';
import { readOperations } from './reads.ts';
import { resourceOperations } from './resources.ts';

export const appointments: Area = {
  name: 'appointments',
  // the fixed path /appointments/availability comes before /appointments/{appointmentId}
  operations: [...availabilityOperations, ...readOperations, ...bookingOperations, ...resourceOperations],
  tasks: () => ({ availability_prune: availabilityPrune }),
  crontab: [availabilityPruneCron],
  fixture: appointmentsFixture,
  graphql: {
    // what appointments_get, locations_list, calendars_list and territories_list show
    // (staff_profile_id is team_member_id, starts_at and ends_at start_time and end_time). Not who
    // or which key booked an appointment, its source or cancellation time, a location's SMS number,
    // offerings, team members' links, or occurrences of repeating appointments.
    tables: {
      appointments: ['organization_id', 'id', 'kind', 'location_id', 'staff_profile_id', 'calendar_id', 'offering_id', 'contact_id',
        'title', 'description', 'attendee_name', 'attendee_phone', 'attendee_email', 'attendee_notes', 'service_address',
        'starts_at', 'ends_at', 'status', 'rrule', 'recurrence_ends_on', 'created_at', 'updated_at'],
      locations: ['organization_id', 'id', 'name', 'timezone', 'staffed', 'hours', 'slot_interval_minutes', 'address'],
      calendars: ['organization_id', 'id', 'location_id', 'name'],
      territories: ['organization_id', 'id', 'location_id', 'name', 'country_code', 'postal_codes'],
    },
    groupBy: ['kind', 'calendar_id'],
  },
};
