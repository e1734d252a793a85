// Helpers of the availability and booking suites, and their malformed inputs.
import type { MalformedInput } from '../helpers/fuzz.ts';

export const bookingMalformedInput: MalformedInput = {};
