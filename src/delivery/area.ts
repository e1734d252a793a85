// The delivery area: the transports every area sends through (index.ts, shared machinery) and
// the public pages the providers post back to (webhooks.ts). No operations of its own.
import type { Area } from '../registry/area.ts';
import { emailPages } from './inbound_email.ts';
import { webhookPages } from './webhooks.ts';

export const delivery: Area = {
  name: 'delivery',
  operations: [],
  pages: [...webhookPages, ...emailPages],
};
