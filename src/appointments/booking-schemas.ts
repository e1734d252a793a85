// The inputs of availability and booking: times, service addresses, the fields of a booking an
// update may change.
import { z } from 'zod';
import { Email, Phone } from '../platform/schemas.ts';

/** A date-time with Z or an offset (a local time without one would be read in some other zone). */
const DateTime = z.iso.datetime({ offset: true });
/** When a booking starts (the examples: one morning in London, each before every example end_time). */
export const StartTime = DateTime.meta({ examples: ['2030-04-04T09:00:00+01:00', '2030-04-04T08:30:00Z', '2030-04-04T10:00:00+01:00'] });
export const EndTime = DateTime.meta({ examples: ['2030-04-04T11:30:00+01:00', '2030-04-04T11:00:00Z', '2030-04-04T12:00:00+01:00'] });
/** A day in a location's time zone. */
export const LocalDate = z.iso.date().meta({ examples: ['2030-03-05', '2030-03-10', '2030-11-03'] });

export const PostalCode = z.string().trim().min(1).max(20).regex(/^[A-Za-z0-9 -]+$/, 'letters, digits, spaces and dashes')
  .meta({ examples: ['12207', 'SW1A 1AA'] });
export const CountryCode = z.string().regex(/^[A-Za-z]{2}$/, 'an ISO 3166-1 alpha-2 code such as US')
  .meta({ examples: ['US', 'GB'] }).transform((c) => c.toUpperCase());

const Line = z.string().max(200);

/** Where a home visit takes place: its postal code must lie in a territory of the location. */
export const ServiceAddressInput = z.strictObject({
  line1: Line.nullish(),
  line2: Line.nullish(),
  city: Line.nullish(),
  region: Line.nullish(),
  postal_code: PostalCode,
  country_code: CountryCode.describe('ISO 3166-1 alpha-2'),
});

/** The fields appointments_update changes (null clears). */
export const AppointmentPatch = {
  title: z.string().max(500).nullable().optional(),
  description: z.string().max(10000).nullable().optional().describe('Notes; null clears them'),
  attendee_name: z.string().max(200).nullable().optional(),
  attendee_phone: Phone.nullable().optional(),
  attendee_email: Email.nullable().optional(),
  attendee_notes: z.string().max(10000).nullable().optional(),
};
