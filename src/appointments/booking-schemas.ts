// The inputs of availability and booking: times, service addresses, the fields of a booking an
// update may change.
import { z } from 'zod';
import { Email, Phone } from '../platform/schemas.ts';

/** A date-time with Z or an offset (a local time without one would be read in some other zone). */
export const DateTime = z.iso.datetime({ offset: true }).meta({ examples: ['2026-12-07T15:00:00Z', '2026-12-07T10:00:00-05:00'] });

export const PostalCode = z.string().trim().min(1).max(20).regex(/^[A-Za-z0-9 -]+$/, 'letters, digits, spaces and dashes');
export const CountryCode = z.string().regex(/^[A-Za-z]{2}$/, 'an ISO 3166-1 alpha-2 code such as US').transform((c) => c.toUpperCase());

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
