// What the delivery suites share.
import type { TestApp } from '../helpers/app.ts';
import { runJobs } from '../helpers/messages.ts';
import type { Transports } from '../../src/delivery/index.ts';
import { sinkTransport } from '../../src/delivery/sink.ts';
import { enroll } from '../sequences/engine-helpers.ts';

/** A provider that accepts every email and reports later (no sink: nothing is delivered by itself). */
export const provider: Transports = { email: { name: 'provider', async send() { /* accepted */ } }, sms: sinkTransport };

/**
 * Enrolls a contact in `sequenceId` (ending its other enrollments first) and sends the first step
 * through the provider: the enrollment's and the message's ids.
 */
export async function sentStep(app: TestApp, key: string, sequenceId: string, contactId: string): Promise<{ enrollment: string; message: string }> {
  await app.db.owner.query(`update app_public.enrollments set status = 'cancelled' where contact_id = $1 and status in ('active', 'paused')`, [contactId]);
  const res = await enroll(app, key, sequenceId, { contact_id: contactId });
  if (res.status !== 200) throw new Error(JSON.stringify(res.body));
  await runJobs(app.db, provider);
  const { rows: [m] } = await app.db.owner.query(`select id from app_private.outgoing_messages where meta->>'enrollment_id' = $1`, [res.body.enrollment.id]);
  return { enrollment: res.body.enrollment.id, message: m.id };
}
