// The optional SMTP listener (SVC_SMTP_LISTEN=host:port, off by default): for operators who point
// MX at the service, replies to our reply+TOKEN@ addresses arrive here directly instead of through
// a provider's signed webhook (src/delivery/inbound_email.ts), and take the same path from there:
// mailparser, emailFacts, app_hidden.delivery_inbound_email.
//   - RCPT TO: only reply+TOKEN@domain where TOKEN names an email we sent from that domain
//     (app_hidden.delivery_reply_address_known); anything else is 550 there, so the listener
//     relays nothing and never takes mail for an unknown token.
//   - Size: SIZE is advertised; a message over the limit (10 MB, as the webhook's) is 552 and
//     nothing is recorded.
//   - No AUTH (nobody logs in to send through it) and no STARTTLS (no certificate of ours):
//     put a TLS-terminating MTA in front where that matters.
//   - A message the SQL refuses (no From, an unknown number of ours) is 550; a failure of ours
//     (the database away) is 451, so the sending server tries again later.
// Idempotent as the webhook is: the same Message-ID delivered twice is recorded once.
import type { AddressInfo } from 'node:net';
import type pg from 'pg';
import { simpleParser } from 'mailparser';
import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import { publicCall } from '../db/request.ts';
import { log } from '../log.ts';
import { toApiError } from '../platform/errors.ts';
import { messageIdOfReplyAddress } from './email_headers.ts';
import { emailFacts } from './inbound_email.ts';

export const SMTP_MAX_BYTES = 10 * 1024 * 1024;

export interface SmtpListenerOptions {
  /** The request pool (svc_login): the listener's statements run as the request role, as the webhook's. */
  pool: pg.Pool;
  host: string;
  /** 0: any free port. */
  port: number;
  /** The largest message accepted, in bytes (default 10 MB). */
  maxBytes?: number;
}

export interface SmtpListener {
  /** The port it listens on. */
  port: number;
  close(): Promise<void>;
}

/** host and port of SVC_SMTP_LISTEN (`host:port`, `[v6]:port`); undefined when unset; throws on anything else. */
export function parseSmtpListen(setting: string | undefined): { host: string; port: number } | undefined {
  if (!setting) return undefined;
  const m = /^(?:\[([0-9a-f:.]+)\]|([^:\s[\]]+)):(\d{1,5})$/i.exec(setting.trim());
  const port = m ? Number(m[3]) : NaN;
  if (!m || !(port >= 0 && port < 65536)) throw new Error(`SVC_SMTP_LISTEN must be host:port, got "${setting}"`);
  return { host: (m[1] ?? m[2])!, port };
}

/** An SMTP error with its reply code, as smtp-server sends it. */
const smtpError = (code: number, message: string) => Object.assign(new Error(message), { responseCode: code });

/** Whether `address` is the reply address of an email of ours. */
async function knownReplyAddress(pool: pg.Pool, address: string): Promise<boolean> {
  if (!messageIdOfReplyAddress(address)) return false;
  const [row] = await publicCall<{ known: boolean }>(pool, 'select app_hidden.delivery_reply_address_known($1) as known', [address]);
  return row?.known === true;
}

async function readLimited(stream: SMTPServerDataStream): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return stream.sizeExceeded ? undefined : Buffer.concat(chunks);
}

/** Records one received message for each of its (already checked) recipients. */
async function receive(pool: pg.Pool, raw: Buffer, session: SMTPServerSession): Promise<void> {
  let mail;
  try {
    mail = await simpleParser(raw, { skipImageLinks: true, skipTextToHtml: true });
  } catch {
    throw smtpError(550, '5.6.0 The message could not be parsed');
  }
  const from = session.envelope.mailFrom ? session.envelope.mailFrom.address : undefined;
  for (const rcpt of session.envelope.rcptTo) {
    const f = emailFacts(mail, { to: rcpt.address, from: from || undefined });
    await publicCall(pool, 'select app_hidden.delivery_inbound_email($1, $2, $3, $4, $5, $6, $7) as result',
      [f.to, f.from, f.subject, f.body, f.inReplyTo, f.providerId, f.autoReply]);
  }
}

/** Starts the listener; resolves once it listens. */
export async function startSmtpListener(opts: SmtpListenerOptions): Promise<SmtpListener> {
  const maxBytes = opts.maxBytes ?? SMTP_MAX_BYTES;
  const server = new SMTPServer({
    banner: 'svc inbound mail',
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    size: maxBytes,
    maxClients: 100,
    logger: false,
    disableReverseLookup: true,
    onRcptTo(address, _session, callback) {
      knownReplyAddress(opts.pool, address.address).then(
        (known) => callback(known ? undefined : smtpError(550, '5.1.1 No such mailbox here')),
        (e: unknown) => {
          log.warn({ err: e }, 'SMTP listener: could not check a recipient');
          callback(smtpError(451, '4.3.0 Try again later'));
        });
    },
    onData(stream, session, callback) {
      readLimited(stream)
        .then((raw) => {
          if (!raw) throw smtpError(552, `5.3.4 Message larger than ${maxBytes} bytes`);
          return receive(opts.pool, raw, session);
        })
        .then(() => callback(), (e: unknown) => {
          if ((e as { responseCode?: number }).responseCode) return callback(e as Error);
          const api = toApiError(e);
          if (api.statusCode < 500) return callback(smtpError(550, `5.7.1 ${api.message}`));
          log.warn({ err: e }, 'SMTP listener: could not record a message');
          callback(smtpError(451, '4.3.0 Try again later'));
        });
    },
  });
  server.on('error', (err) => log.warn({ err }, 'SMTP listener error'));
  await new Promise<void>((resolve, reject) => {
    server.server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.server.off('error', reject);
      resolve();
    });
  });
  const port = (server.server.address() as AddressInfo).port;
  log.info({ host: opts.host, port }, 'SMTP listener started');
  return { port, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
