// `svc admin delivery --message-id ID --event delivered|bounced|failed|complained|opened|clicked [--bounce hard|soft]
// [--reason TEXT]` (operator-cli.md, "Simulating the outside world"): the provider reports what
// became of a message, through the same SQL as the email events webhook. Recorded once per
// (message, event, bounce): the same report again answers duplicate true.
import type pg from 'pg';
import { AdminError } from '../admin/commands.ts';

export interface AdminDeliveryInput { messageId?: string; event?: string; bounce?: string; reason?: string }

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const EVENTS = ['delivered', 'bounced', 'failed', 'complained', 'opened', 'clicked'];

export async function adminDelivery(pool: pg.Pool, input: AdminDeliveryInput): Promise<Record<string, unknown>> {
  const id = input.messageId?.trim().replace(/^<|@[^>]*>?$/g, '') ?? '';
  if (!UUID.test(id)) throw new AdminError('--message-id must be a message id (meta.message_id of an outbox line)');
  if (!input.event || !EVENTS.includes(input.event)) throw new AdminError(`--event must be one of ${EVENTS.join(', ')}`);
  if (input.bounce !== undefined && input.event !== 'bounced') throw new AdminError('--bounce goes with --event bounced');
  const bounce = input.event === 'bounced' ? (input.bounce ?? 'hard') : undefined;
  if (bounce !== undefined && bounce !== 'hard' && bounce !== 'soft') throw new AdminError('--bounce must be hard or soft');
  if (input.reason !== undefined && (input.reason.length > 500 || input.reason.includes('\u0000'))) {
    throw new AdminError('--reason is at most 500 characters, without NUL');
  }
  const detail = { ...(bounce ? { bounce } : {}), ...(input.reason ? { reason: input.reason } : {}) };
  const { rows: [row] } = await pool.query('select app_hidden.delivery_record_event(null, $1, $2, $3, $4) as result',
    [id.toLowerCase(), `admin:${id.toLowerCase()}:${input.event}${bounce ? `:${bounce}` : ''}`, input.event, detail]);
  const result = row.result as Record<string, unknown>;
  if (result.known === false) throw new AdminError(`No message ${id}`);
  return result;
}
