// Outbound webhooks for integrations: an organization's subscriptions (svc admin webhook
// add|list|remove) and the signed deliveries of its events (docs/webhooks.md).
import { loadConfig } from '../config.ts';
import type { Area } from '../registry/area.ts';
import { deliverWebhook } from './webhook_deliver.ts';

export const webhooks: Area = {
  name: 'webhooks',
  operations: [],
  tasks: () => {
    const config = loadConfig();
    return { webhook_deliver: deliverWebhook({ allowPrivate: config.webhooksAllowPrivate, retryBaseMs: config.webhooksRetryBaseMs }) };
  },
};
