// Phone numbers are stored in E.164. libphonenumber-js knows every country's numbering plan,
// which a hand-written rule would not.
import { parsePhoneNumberFromString } from 'libphonenumber-js';

/**
 * E.164 form of a number written with its country code, or undefined. "Possible" (right
 * length for its country) rather than "valid": reserved ranges such as +1 555 are what tests
 * and demos use, and a number that merely looks unassigned today is still the caller's data.
 */
export function toE164(raw: string): string | undefined {
  if (!raw.trim().startsWith('+')) return undefined;
  const parsed = parsePhoneNumberFromString(raw);
  return parsed && parsed.isPossible() ? parsed.number : undefined;
}
