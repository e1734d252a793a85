// sequences_test_step: sends the saved email or SMS step once, now, to an address or a contact,
// through the same renderer and send-time checks as the engine. The local sink stores it in the
// call's own transaction; any other transport gets it from here and its answer is recorded
// before the call answers, so `transport_error` is what the transport said.
import { z } from 'zod';
import { sql } from '../db/sql.ts';
import { createTransports, type OutgoingMessage, type Transports } from '../delivery/index.ts';
import type { Config } from '../config.ts';
import { defineOperation } from '../registry/operation.ts';
import { Email, Phone, result, uuid } from '../platform/schemas.ts';
import { StepKey } from './enroll.ts';

export const ReasonCode = z.enum(['opted_out', 'suppressed', 'no_consent', 'missing_address', 'transport_error']);

const TestResult = z.object({
  success: z.boolean().describe('Whether the message was handed to the transport'),
  error: z.string().optional().describe('Why not, in words'),
  reason_code: ReasonCode.optional().describe('Why not: opted_out, suppressed, no_consent, missing_address, transport_error'),
  message_id: uuid.optional().describe('The message sent (the outbox\'s meta.message_id)'),
});

const transportsByConfig = new Map<string, Transports>();
function transportsFor(config: Config): Transports {
  const k = `${config.emailTransport}\n${config.smsTransport}`;
  let t = transportsByConfig.get(k);
  if (!t) transportsByConfig.set(k, (t = createTransports(config)));
  return t;
}

interface SendAnswer extends z.input<typeof TestResult> { message?: OutgoingMessage }

export const sequencesTestStep = defineOperation({
  operationId: 'sequences_test_step',
  method: 'POST',
  path: '/api/v1/sequences/{sequenceId}/steps/{step_key}/test',
  tag: 'Sequences',
  summary: 'Send one step of a sequence as a test',
  description:
    'Sends the saved email or SMS step once, now, outside any enrollment, so the author sees what recipients get. This '
    + 'sends a message: ask the user first. Send exactly one of `to_email` (an email step), `to_phone` (an SMS step) or '
    + '`contact_id` (either kind: the contact\'s data fills the variables and the message goes to its address). The same '
    + 'checks as a real send apply; when one refuses, the answer is 200 with `success: false`, `reason_code` '
    + '(`suppressed`, `opted_out`, `no_consent`, `missing_address`) and `error`; a transport that refuses the message '
    + 'gives `transport_error`. 404 for an unknown sequence, step or contact; 400 for a wait step or a recipient that does '
    + 'not fit the step.',
  scope: 'sequences:write',
  memberAccess: 'deny',
  managerPower: 'sequences',
  confirm: true,
  changes: [],
  params: z.object({ sequenceId: uuid.describe('The sequence\'s id'), step_key: StepKey.describe('The step to send') }),
  body: z.strictObject({
    to_email: Email.optional().describe('Send an email step to this address'),
    to_phone: Phone.optional().describe('Send an SMS step to this number'),
    contact_id: uuid.optional().describe('Send to this contact, its data filling the variables'),
  }),
  response: TestResult,
  run: {
    handler: async (tx, { input, config }) => {
      const sinks = JSON.stringify([config.emailTransport === 'sink' ? 'email' : null, config.smsTransport === 'sink' ? 'sms' : null]
        .filter(Boolean));
      const [row] = await tx.query<{ result: SendAnswer }>(sql`select app_public.sequences_test_step(${input.sequenceId}::uuid,
        ${input.step_key}::text, ${input.to_email ?? null}::text, ${input.to_phone ?? null}::text, ${input.contact_id ?? null}::uuid,
        ${config.baseUrl}::text, array(select jsonb_array_elements_text(${sinks}::jsonb))) as result`);
      const { message, ...answer } = row!.result;
      if (!message) return answer;
      const transport = transportsFor(config)[message.channel];
      let error: string | null = null;
      try {
        // only the sink writes with the transaction, and the sink is handled in SQL
        await transport.send(message, undefined as never);
      } catch (e) {
        error = String((e as Error)?.message ?? e).slice(0, 500);
      }
      await tx.query(sql`select app_hidden.sequences_test_step_record(${message.id}::uuid, ${error}::text)`);
      return error === null ? answer
        : { success: false, reason_code: 'transport_error' as const, error: `The transport refused the message: ${error}`, message_id: message.id };
    },
  },
});
