// locations_list, locations_booking_options, territories_list, calendars_list.
import type { AnyOperation } from '../registry/operation.ts';

export const resourceOperations: AnyOperation[] = [];
