// POST /api/v1/receptionist/chat/completions: the receptionist as a voice platform's custom
// language model (docs/voice.md). One request is one turn of a call:
//   1. the organization's voice secret (Authorization: Bearer; 401 with no detail otherwise),
//      then its rate limit (VOICE_RATE_LIMIT requests a minute per organization; 429);
//   2. the body (OpenAI's request plus metadata {call_id, from, to}; 400 in OpenAI's shape);
//   3. app_hidden.voice_turn writes the caller's last words as the call conversation's inbound
//      message (404 when `to` is not the organization's), in its own transaction, before anything
//      answers; a turn already answered is replayed as it was;
//   4. the receptionist answers (src/voice/brain.ts), and app_hidden.voice_record writes the
//      answer, once, in one transaction;
//   5. the answer goes out as a chat.completion, or as chat.completion.chunk events.
// Every write is done by its own transaction before the answer is sent: a platform that hangs up
// mid-stream leaves the turn whole, and one that repeats the turn gets the same answer.
import { randomUUID } from 'node:crypto';
import type { Request, Response } from 'express';
import type pg from 'pg';
import { publicCall } from '../db/request.ts';
import { readRawBody } from '../http/body.ts';
import { postgresWindowStore, RateLimiter } from '../http/rate-limit.ts';
import { log } from '../log.ts';
import { toApiError } from '../platform/errors.ts';
import type { PublicPage } from '../registry/area.ts';
import type { Config } from '../config.ts';
import { receptionistBrain, type BrainAnswer, type VoiceAnswer, type VoiceBrain } from './brain.ts';
import { CompletionRequest, MODEL_NAME, pieces, sendOpenAiError, textOf, transferToolCall } from './protocol.ts';
import { bearerVoiceSecret, hashVoiceSecret } from './secret.ts';

export const COMPLETIONS_PATH = '/api/v1/receptionist/chat/completions';
const MAX_BODY = 1024 * 1024;

/** What one call may use before it is handed to a person: caller turns, caller characters, seconds since its first turn. */
export const CALL_BOUNDS = { turns: 60, characters: 20_000, seconds: 1800 } as const;
/** The longest caller turn answered (the chat's own limit). */
export const TURN_MAX_CHARACTERS = 2000;

export const HANDOVER_TRANSFER = 'Let me put you through to someone from our team. One moment, please.';
export const HANDOVER_CALLBACK = 'Someone from our team will call you back shortly. Thank you for calling.';
const GREETING = 'Hello, thanks for calling. How can I help you today?';

interface TurnRow {
  organization_id: string; conversation_id: string; contact_id: string; location_id: string | null;
  message_id?: string; answer?: VoiceAnswer | null; held: boolean; over?: string;
}

const limiters = new WeakMap<pg.Pool, RateLimiter>();
function limiterFor(pool: pg.Pool): RateLimiter {
  let l = limiters.get(pool);
  if (!l) {
    const limit = Number(process.env.VOICE_RATE_LIMIT ?? 600);
    l = new RateLimiter({ limit: Number.isInteger(limit) && limit > 0 ? limit : 600, store: postgresWindowStore(pool) });
    limiters.set(pool, l);
  }
  return l;
}

/** The answer as spoken: the reply, or the hand-over sentence (with the transfer, when the request names a number). */
function spoken(answer: { kind: 'reply'; text: string } | { kind: 'handover'; reason: string }, transfer: string | undefined): VoiceAnswer {
  if (answer.kind === 'reply') return { kind: 'reply', text: answer.text, spoken: answer.text };
  return { kind: 'handover', reason: answer.reason, spoken: transfer ? HANDOVER_TRANSFER : HANDOVER_CALLBACK, ...(transfer ? { transfer_to: transfer } : {}) };
}

async function handle(req: Request, res: Response, pool: pg.Pool, config: Config, brain: VoiceBrain): Promise<void> {
  const secret = bearerVoiceSecret(req.get('authorization'));
  if (!secret) return sendOpenAiError(res, 401, 'Unauthorized');
  const secretHash = hashVoiceSecret(secret);
  const [auth] = await publicCall<{ org: string }>(pool, 'select app_hidden.voice_authenticate($1) as org', [secretHash]);
  const verdict = limiterFor(pool).hit(auth!.org, 'voice');
  if (!verdict.allowed) {
    res.setHeader('Retry-After', String(verdict.reset));
    return sendOpenAiError(res, 429, `Over the limit of ${verdict.limit} requests a minute for this organization`, null, 'rate_limited');
  }

  const raw = await readRawBody(req, MAX_BODY);
  const type = (req.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') return sendOpenAiError(res, 400, 'Send application/json', null, 'unsupported_media_type');
  let json: unknown;
  try {
    json = JSON.parse(raw.toString('utf8'));
  } catch {
    return sendOpenAiError(res, 400, 'The body is not JSON', null, 'invalid_json');
  }
  const parsed = CompletionRequest.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const param = issue.path.join('.') || null;
    return sendOpenAiError(res, 400, `${param ?? 'body'}: ${issue.message}`, param, 'invalid_value');
  }
  const body = parsed.data;
  const { call_id, from, to, transfer_number } = body.metadata;
  const users = body.messages.filter((m) => m.role === 'user');
  const said = users.length ? textOf(users.at(-1)!).trim() : '';
  if (users.length && !said) return sendOpenAiError(res, 400, 'messages: the caller\'s last message is empty', 'messages', 'invalid_value');
  if (said.length > TURN_MAX_CHARACTERS) {
    return sendOpenAiError(res, 400, `messages: a caller turn is at most ${TURN_MAX_CHARACTERS} characters`, 'messages', 'invalid_value');
  }

  let answer: VoiceAnswer;
  if (!users.length) {
    // the platform asks for an opening line before the caller spoke: nothing to record
    answer = { kind: 'reply', text: GREETING, spoken: GREETING };
  } else {
    const [row] = await publicCall<{ turn: TurnRow }>(pool,
      'select app_hidden.voice_turn($1, $2, $3, $4, $5, $6, $7) as turn',
      [secretHash, call_id, from, to, users.length, said, JSON.stringify(CALL_BOUNDS)]);
    const turn = row!.turn;
    if (turn.over) {
      answer = spoken({ kind: 'handover', reason: `the call is over its ${turn.over} bound` }, transfer_number);
    } else if (turn.answer) {
      answer = turn.answer;
    } else {
      const decided: BrainAnswer = turn.held ? { kind: 'handover', reason: 'a person answers this conversation' }
        : await brain(pool, secretHash, { ...turn, message_id: turn.message_id! }, config);
      const record = decided.decided ?? decided;
      const state = decided.decided?.kind === 'reply' ? decided.decided.state : null;
      const inbox = `${config.baseUrl.replace(/\/+$/, '')}/dashboard/inbox`;
      const [kept] = await publicCall<{ answer: VoiceAnswer }>(pool,
        'select app_hidden.voice_record($1, $2, $3, $4, $5, $6, $7) as answer',
        [secretHash, call_id, users.length, JSON.stringify(spoken(decided, transfer_number)), JSON.stringify(record),
          state ? JSON.stringify(state) : null, inbox]);
      answer = kept!.answer;
    }
  }
  respond(res, body.stream, answer);
}

function respond(res: Response, stream: boolean, answer: VoiceAnswer): void {
  const id = `chatcmpl-${randomUUID().replaceAll('-', '')}`;
  const created = Math.floor(Date.now() / 1000);
  const transfer = answer.transfer_to ? [transferToolCall(id.slice(8, 32), answer.transfer_to)] : undefined;
  const finish = transfer ? 'tool_calls' : 'stop';
  if (!stream) {
    res.status(200).json({
      id, object: 'chat.completion', created, model: MODEL_NAME,
      choices: [{ index: 0, message: { role: 'assistant', content: answer.spoken, ...(transfer ? { tool_calls: transfer } : {}) },
        finish_reason: finish, logprobs: null }],
      usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
      ...(answer.kind === 'handover' ? { handover: { reason: answer.reason ?? null, transfer_to: answer.transfer_to ?? null } } : {}),
    });
    return;
  }
  res.status(200).set({ 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-store', Connection: 'keep-alive' });
  const event = (delta: Record<string, unknown>, finishReason: string | null) => {
    if (res.destroyed) return;
    res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: MODEL_NAME,
      choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }] })}\n\n`);
  };
  pieces(answer.spoken).forEach((piece, i) => event(i === 0 ? { role: 'assistant', content: piece } : { content: piece }, null));
  if (transfer) event({ tool_calls: transfer.map((t, index) => ({ index, ...t })) }, null);
  event({}, finish);
  if (!res.destroyed) res.end('data: [DONE]\n\n');
}

/** The endpoint, with the receptionist (or, for tests and benches, another brain). */
export function completionsPage(brain: VoiceBrain = receptionistBrain): PublicPage {
  return {
    method: 'POST',
    path: COMPLETIONS_PATH,
    // a platform calls from a handful of addresses for every call: limited per organization here
    provider: true,
    async handle(req, res, { pool, config }) {
      try {
        await handle(req, res, pool, config, brain);
      } catch (e) {
        const err = toApiError(e);
        if (err.statusCode >= 500) log.error({ err: e }, 'voice turn failed');
        if (res.headersSent) return void res.end();
        // 401 says nothing more than that
        if (err.statusCode === 401) return sendOpenAiError(res, 401, 'Unauthorized');
        const param = err.statusCode === 404 ? 'metadata.to' : null;
        sendOpenAiError(res, err.statusCode, err.statusCode >= 500 ? 'The receptionist could not answer; retry' : err.message, param, err.code);
      }
    },
  };
}
