// What a transport is: where delivery hands one outgoing message over.
import type pg from 'pg';

/** A row of app_private.outgoing_messages, as the delivery task hands it over. */
export interface OutgoingMessage {
  organization_id: string;
  id: string;
  channel: 'email' | 'sms';
  sender: string | null;
  recipient: string;
  subject: string | null;
  body: string;
  meta: Record<string, unknown>;
}

export interface Transport {
  /** For logs: which kind of transport this is (never its URL, which may carry credentials). */
  readonly name: string;
  /**
   * Hands one message over and resolves once it was accepted; throws otherwise. `tx` is the
   * delivering transaction, which marks the message sent right after and commits. A provider that
   * names the message (Twilio's SID) answers its id, kept as the message's provider_id.
   */
  send(message: OutgoingMessage, tx: pg.ClientBase): Promise<void | { providerId?: string }>;
  /** Closes what the transport keeps open (an SMTP pool), if anything. */
  close?(): void;
}

export type Transports = Record<OutgoingMessage['channel'], Transport>;

/**
 * A refusal that sending again cannot change (an SMTP 5xx: no such mailbox, rejected as spam):
 * the message is marked failed with this reason at once, never retried.
 */
export class PermanentDeliveryError extends Error {
  readonly permanent = true;
}

/**
 * An HTTP provider's refusal: 429 (too many requests), 408, 425, 5xx, and 401/403/409 (credentials or
 * an account the operator can fix within the retry window) are temporary, thrown as plain errors
 * for the delivery queue to retry; any other 4xx (a bad number, a refused body) is permanent.
 */
export function httpRefusal(provider: string, status: number, text: string): Error {
  const message = `${provider} answered ${status}: ${text.slice(0, 200)}`;
  const temporary = status === 429 || status >= 500 || [401, 403, 408, 409, 425].includes(status);
  return temporary ? new Error(message) : new PermanentDeliveryError(message);
}

export const isPermanentDeliveryError = (e: unknown): boolean => (e as { permanent?: unknown })?.permanent === true;
