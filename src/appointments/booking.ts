// appointments_create, appointments_update, appointments_reschedule, appointments_cancel.
import type { AnyOperation } from '../registry/operation.ts';

export const bookingOperations: AnyOperation[] = [];
