// The sequences area: automations that follow up by email and SMS, the send windows they keep,
// and the engine that sends each step once.
import type { Area } from '../registry/area.ts';

export const sequences: Area = {
  name: 'sequences',
  operations: [],
};
