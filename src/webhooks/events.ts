// The events an integration may subscribe to (the spec's automation-platform integration), each
// produced by a trigger on the table it describes (the `_900_webhooks*` triggers, which call
// app_private.webhook_emit; db/schema/webhooks.sql).
export const WEBHOOK_EVENTS = [
  'contact.created', 'contact.updated', 'enrollment.completed', 'appointment.booked', 'appointment.cancelled',
  'message.received', 'form.submitted', 'conversation.handed_over',
] as const;
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number];

/** Deliveries are retried for this long after the event, then marked failed. */
export const RETRY_FOR_MS = 3 * 24 * 3600 * 1000;
/** The longest pause between two attempts. */
export const MAX_RETRY_DELAY_MS = 6 * 3600 * 1000;
/** How long a receiver has to answer one attempt. */
export const DELIVERY_TIMEOUT_MS = 10_000;

/**
 * The pause after the `attempts`-th failed attempt: `baseMs` doubled each time (30 s, 1 min,
 * 2 min, … with the default), at most MAX_RETRY_DELAY_MS, less up to a fifth at random so that
 * a receiver back from an outage is not hit by every delivery at once.
 */
export function retryDelayMs(attempts: number, baseMs: number, random = Math.random): number {
  const delay = Math.min(baseMs * 2 ** Math.min(attempts - 1, 30), MAX_RETRY_DELAY_MS);
  return Math.round(delay * (1 - random() / 5));
}
