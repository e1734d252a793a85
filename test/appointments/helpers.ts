// The appointments suites' shared setup: the booking fixture (reads-helpers.ts) and each part's
// malformed inputs, composed for the malformed-input suite (test/platform/malformed.test.ts).
import { composeMalformedInput } from '../sequences/authoring-helpers.ts';
import { bookingMalformedInput } from './booking-helpers.ts';
import { readsMalformedInput } from './reads-helpers.ts';

export const malformedInput = composeMalformedInput(readsMalformedInput, bookingMalformedInput);
