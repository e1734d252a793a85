// The booking fixture every appointments suite starts from, and the reads' malformed inputs.
import type { MalformedInput } from '../helpers/fuzz.ts';

export const readsMalformedInput: MalformedInput = {};
