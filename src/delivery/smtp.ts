// Email over SMTP (EMAIL_TRANSPORT=smtp://user:pass@host:port or smtps://…), through nodemailer.
import nodemailer from 'nodemailer';
import type { Transport } from './transport.ts';

export function smtpTransport(url: string): Transport {
  // One connection per message (no pool): nothing outlives a stopped worker. The timeouts bound
  // how long a delivery can hold up a graceful shutdown; the URL's own query options win.
  const mailer = nodemailer.createTransport({ url, connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 20_000 });
  return {
    name: 'smtp',
    async send(m) {
      const domain = m.sender?.split('@')[1] || 'localhost';
      // Headers the message was built with (meta.headers: List-Unsubscribe and
      // List-Unsubscribe-Post on sequence mail); Message-ID is nodemailer's messageId below.
      const { 'Message-ID': _messageId, ...headers } = (m.meta?.headers ?? {}) as Record<string, string>;
      await mailer.sendMail({
        from: m.sender ?? undefined,
        to: m.recipient,
        subject: m.subject ?? '',
        ...(m.meta?.html === true ? { html: m.body } : { text: m.body }),
        headers,
        // Stable per message: if a retry sends it again (see workers/deliver_message.ts), the
        // receiving side can recognise the duplicate.
        messageId: `<${m.id}@${domain}>`,
      });
    },
  };
}
