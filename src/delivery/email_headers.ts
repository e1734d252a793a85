// The headers every email the service sends carries, in one place for every sender (sequence
// steps, conversations, broadcasts): a Message-ID on the sending domain, Reply-To
// reply+TOKEN@ that domain (TOKEN names the message: an answer sent to it finds the message
// and its conversation even when the mail client dropped In-Reply-To), and the RFC 8058
// one-click unsubscribe pair for bulk mail.
import type { OutgoingMessage } from './transport.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The domain a message is sent from: its sender's, else localhost. */
export const sendingDomain = (sender: string | null | undefined): string => sender?.split('@')[1]?.toLowerCase() || 'localhost';

/** The reply token of a message: its id, hex without dashes. */
export const replyToken = (messageId: string): string => messageId.replace(/-/g, '').toLowerCase();

/** The Reply-To address of a message sent from `domain`. */
export const replyAddress = (messageId: string, domain: string): string => `reply+${replyToken(messageId)}@${domain}`;

/** The message id a reply+TOKEN@… address names, or undefined for any other address. */
export function messageIdOfReplyAddress(address: string): string | undefined {
  const m = /^reply\+([0-9a-f]{32})@[^@\s]+$/i.exec(address.trim());
  if (!m) return undefined;
  const h = m[1]!.toLowerCase();
  const id = `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  return UUID.test(id) ? id : undefined;
}

/** The Message-ID of a message sent from `domain`: stable, so a resent duplicate is recognisable. */
export const messageIdHeader = (messageId: string, domain: string): string => `<${messageId}@${domain}>`;

/** RFC 8058: the one-click unsubscribe pair for a message whose unsubscribe page is `url` (https). */
export function unsubscribeHeaders(url: string): { 'List-Unsubscribe': string; 'List-Unsubscribe-Post': string } {
  return { 'List-Unsubscribe': `<${url}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' };
}

/**
 * The Message-ID and the other headers of an outgoing email: those it was built with
 * (meta.headers, such as the unsubscribe pair), Reply-To reply+TOKEN@ the sending domain unless
 * it was given one. The Message-ID is returned apart (nodemailer sets it from its own option).
 */
export function emailEnvelopeHeaders(m: Pick<OutgoingMessage, 'id' | 'sender' | 'meta'>): { messageId: string; headers: Record<string, string> } {
  const domain = sendingDomain(m.sender);
  const { 'Message-ID': given, ...headers } = (m.meta?.headers ?? {}) as Record<string, string>;
  if (!Object.keys(headers).some((h) => h.toLowerCase() === 'reply-to')) headers['Reply-To'] = replyAddress(m.id, domain);
  return { messageId: given || messageIdHeader(m.id, domain), headers };
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };

/** A plain-text rendering of an HTML body, for the text part beside it: tags dropped, blocks on lines, links kept. */
export function htmlToText(html: string): string {
  return html
    .replace(/<(script|style|head)\b[^>]*>[\s\S]*?<\/\1\s*>/gi, '')
    .replace(/<a\b[^>]*\bhref\s*=\s*["']([^"']+)["'][^>]*>([\s\S]*?)<\/a\s*>/gi, (_, href: string, text: string) =>
      (text.replace(/<[^>]*>/g, '').trim() === href ? href : `${text} (${href})`))
    .replace(/<br\s*\/?>/gi, '\n')
    .replace(/<\/(p|div|h[1-6]|li|tr|table|blockquote)\s*>/gi, '\n\n')
    .replace(/<li\b[^>]*>/gi, '- ')
    .replace(/<[^>]*>/g, '')
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, e: string) => {
      if (e[0] === '#') {
        const n = e[1] === 'x' || e[1] === 'X' ? Number.parseInt(e.slice(2), 16) : Number(e.slice(1));
        return Number.isFinite(n) && n > 0 && n <= 0x10ffff ? String.fromCodePoint(n) : whole;
      }
      return ENTITIES[e.toLowerCase()] ?? whole;
    })
    .replace(/[ \t]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
