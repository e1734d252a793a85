// The appointments area: a location's booking resources (offerings, territories, calendars,
// team members' hours), open slots, and race-free booking.
import type { Area } from '../registry/area.ts';
import { availabilityOperations } from './availability.ts';
import { bookingOperations } from './booking.ts';
import { appointmentsFixture } from './fixture.ts';
import { readOperations } from './reads.ts';
import { resourceOperations } from './resources.ts';

export const appointments: Area = {
  name: 'appointments',
  // the fixed path /appointments/availability comes before /appointments/{appointmentId}
  operations: [...availabilityOperations, ...readOperations, ...bookingOperations, ...resourceOperations],
  fixture: appointmentsFixture,
};
