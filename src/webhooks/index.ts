// Outbound webhooks for integrations: an organization's subscriptions (svc admin webhook
// add|list|remove, the dashboard's webhooks page) and the signed deliveries of its events (docs/webhooks.md).
import { loadConfig } from '../config.ts';
import type { Area } from '../registry/area.ts';
import { webhookPages } from './dashboard.ts';
import { deliverWebhook } from './webhook_deliver.ts';

export const webhooks: Area = {
  name: 'webhooks',
  operations: [],
  pages: webhookPages,
  tasks: () => {
    const config = loadConfig();
    return { webhook_deliver: deliverWebhook({ allowPrivate: config.webhooksAllowPrivate, retryBaseMs: config.webhooksRetryBaseMs }) };
  },
};
