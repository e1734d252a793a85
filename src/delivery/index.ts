// Where an outgoing message goes: one transport per channel, chosen once from EMAIL_TRANSPORT
// and SMS_TRANSPORT (README: Background work and delivery). An unsupported value fails when the
// worker starts, not at the first send hours later.
import type { Config } from '../config.ts';
import type { Transport, Transports } from './transport.ts';
import { sinkTransport } from './sink.ts';
import { smtpTransport } from './smtp.ts';
import { httpSmsTransport } from './sms_http.ts';
import { parseTwilioSetting, twilioSmsTransport } from './twilio.ts';

export type { OutgoingMessage, Transport, Transports } from './transport.ts';
export { PermanentDeliveryError, isPermanentDeliveryError } from './transport.ts';
export { emailEnvelopeHeaders, htmlToText, messageIdOfReplyAddress, replyAddress, unsubscribeHeaders } from './email_headers.ts';
export { handOver, handOverOne, IN_FLIGHT, type HandOverAnswer } from './hand_over.ts';

export function createTransports(config: Pick<Config, 'emailTransport' | 'smsTransport'> & Partial<Pick<Config, 'baseUrl'>>): Transports {
  return { email: emailTransport(config.emailTransport), sms: smsTransport(config.smsTransport, config.baseUrl) };
}

function emailTransport(setting: string): Transport {
  if (setting === 'sink') return sinkTransport;
  const protocol = protocolOf(setting);
  if (protocol === 'smtp:' || protocol === 'smtps:') return smtpTransport(setting);
  throw new Error(`EMAIL_TRANSPORT must be "sink" or an smtp:// or smtps:// URL, got "${redact(setting)}"`);
}

function smsTransport(setting: string, baseUrl: string | undefined): Transport {
  if (setting === 'sink') return sinkTransport;
  const twilio = parseTwilioSetting(setting);
  if (twilio) return twilioSmsTransport(twilio, baseUrl);
  const protocol = protocolOf(setting);
  if (protocol === 'http:' || protocol === 'https:') return httpSmsTransport(setting);
  throw new Error(`SMS_TRANSPORT must be "sink", twilio://SID:TOKEN@HOST or an http:// or https:// provider URL, got "${redact(setting)}"`);
}

/**
 * Whether the email provider reports what became of each message: its signed events webhook
 * (/webhooks/email/events) is configured (EMAIL_WEBHOOK_SECRET), or the sink, which reports
 * every message delivered. Plain SMTP alone does not (sequences_analytics: unsupported).
 */
export const emailDeliveryReported = (emailTransport: string, env: NodeJS.ProcessEnv = process.env): boolean =>
  emailTransport === 'sink' || Boolean(env.EMAIL_WEBHOOK_SECRET);

const protocolOf = (setting: string): string | undefined => (URL.canParse(setting) ? new URL(setting).protocol : undefined);

/** The setting as it may appear in an error message: without its password. */
function redact(setting: string): string {
  if (!URL.canParse(setting)) return setting;
  const url = new URL(setting);
  if (url.password) url.password = '***';
  return url.toString();
}
