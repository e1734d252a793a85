// appointments_availability: open slots of a location's day.
import type { AnyOperation } from '../registry/operation.ts';

export const availabilityOperations: AnyOperation[] = [];
