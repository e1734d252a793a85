// `svc admin inbound call --payload JSON` (operator-cli.md, "Simulating the outside world": the
// providers' code paths reachable from the CLI, for demos and suites that cannot sign): the voice
// platform reports a call, parsed and recorded exactly as its signed webhook's body is
// (POST /webhooks/voice: VoiceCall, then app_hidden.voice_call_record, once per call_id).
import type pg from 'pg';
import { AdminError, asAdmin } from '../admin/commands.ts';
import { publicStatement } from '../db/request.ts';
import { VoiceCall } from './webhook.ts';

export async function adminInboundCall(pool: pg.Pool, payloadJson: string | undefined): Promise<Record<string, unknown>> {
  let raw: unknown;
  try {
    raw = JSON.parse(payloadJson ?? '');
  } catch {
    throw new AdminError('--payload must be the call as JSON, as the voice webhook takes it ({"call_id", "from", "to", …})');
  }
  const parsed = VoiceCall.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new AdminError(`--payload: ${issue.path.join('.') || 'the call'}: ${issue.message}`);
  }
  // a number no organization uses, or several: the database's refusal, as the operator's error
  const [row] = await asAdmin(() => publicStatement<{ result: Record<string, unknown> }>(pool,
    'select app_hidden.voice_call_record($1::jsonb) as result', [JSON.stringify(parsed.data)]));
  return row!.result;
}
