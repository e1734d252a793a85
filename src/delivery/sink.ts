// The local delivery sink (EMAIL_TRANSPORT/SMS_TRANSPORT = sink): the message lands in
// app_private.outbox, read with `svc admin outbox`, instead of leaving the machine. It writes in
// the delivering transaction with the message id as the outbox id, so storing and marking sent
// commit together and a retried delivery can never store a message twice.
import { serially } from '../db/serial.ts';
import type { Transport } from './transport.ts';

export const sinkTransport: Transport = {
  name: 'sink',
  async send(m, tx) {
    // through `serially`: a batch hands its messages over together, on one connection
    await serially(tx,
      `insert into app_private.outbox (organization_id, id, channel, sender, recipient, subject, body, meta)
       values ($1, $2, $3, $4, $5, $6, $7, $8)
       on conflict do nothing`,
      [m.organization_id, m.id, m.channel, m.sender, m.recipient, m.subject, m.body, m.meta]);
  },
};
