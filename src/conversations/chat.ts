// Web chat: the public endpoint a site's chat widget talks to, outside /api/v1 and with no key
// (the widget's id in the URL names the organization and location, as a form's id does):
//   GET  /chat/:widgetId                                          the widget's name, greeting and limits
//   POST /chat/:widgetId/conversations                            a visitor starts a chat: {message, name?, email?, phone?}
//   POST /chat/:widgetId/conversations/:conversationId/messages   the visitor's next message: {message}
//   GET  /chat/:widgetId/conversations/:conversationId/messages   the thread (?after=<message id> for what is new)
// Starting a chat answers a visitor token, once; the database keeps only its SHA-256. The
// visitor shows it as `Authorization: Bearer <token>` to post and to read; a wrong token, another
// widget's conversation and an unknown one are the same 404. Each message is stored with the AI
// receptionist's job (conversation_ai_reply, job key conversation_ai:<message id>) in one
// transaction (app_hidden.chat_start, chat_post): answered once, crash or not.
// CORS answers the widget's allowed_origins only. New chats are limited per client address,
// messages per conversation and minute (429 rate_limited).
import { createHash, randomBytes } from 'node:crypto';
import type { Request, Response } from 'express';
import type pg from 'pg';
import { z } from 'zod';
import { publicStatement } from '../db/request.ts';
import { readRawBody } from '../http/body.ts';
import { corsForOrigins } from '../http/cors.ts';
import { ApiError, badRequest, notFound } from '../platform/errors.ts';
import { parseJsonBody } from '../platform/input.ts';
import { toE164 } from '../platform/phone.ts';
import type { PublicPage } from '../registry/area.ts';

const MAX_BODY = 16 * 1024;
/** The longest message a visitor may send (app_hidden.chat_limits says the same). */
export const CHAT_MESSAGE_MAX = 2000;
const TOKEN_PREFIX = 'svc_chat_';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

interface Widget { id: string; organization_id: string; name: string; greeting: string | null; allowed_origins: string[] }

const Message = z.string().max(CHAT_MESSAGE_MAX).refine((s) => s.trim().length > 0, 'a message of 1 to 2000 characters');
const Start = z.strictObject({
  message: Message,
  name: z.string().trim().min(1).max(200).optional(),
  email: z.email().max(320).optional(),
  phone: z.string().max(40).optional(),
});
const Post = z.strictObject({ message: Message });

/** A new visitor token and the hash the database keeps. */
export function newVisitorToken(): { token: string; hash: string } {
  const token = TOKEN_PREFIX + randomBytes(32).toString('base64url');
  return { token, hash: tokenHash(token) };
}
export const tokenHash = (token: string) => createHash('sha256').update(token).digest('hex');

/** The body as a JSON object checked by `schema`; 415 for another type, 400 naming the field. */
async function jsonBody<T extends z.ZodType>(req: Request, schema: T): Promise<z.output<T>> {
  const type = (req.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  const raw = await readRawBody(req, MAX_BODY, 'A chat message');
  if (type !== 'application/json') throw new ApiError(415, 'unsupported_media_type', 'Send application/json');
  const parsed = schema.safeParse(parseJsonBody(raw));
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => ({ path: ['body', ...i.path].join('.'), message: i.message }));
    throw badRequest(`${issues[0]!.path}: ${issues[0]!.message}`, { issues });
  }
  return parsed.data;
}

/** The visitor's token from `Authorization: Bearer …`, or 401. */
function visitorToken(req: Request): string {
  const m = /^Bearer ([A-Za-z0-9_-]{1,200})$/.exec(req.get('authorization') ?? '');
  if (!m) throw new ApiError(401, 'unauthorized', 'Send the visitor token the chat was started with as Authorization: Bearer <token>');
  return m[1]!;
}

async function widgetOf(pool: pg.Pool, id: string): Promise<Widget> {
  if (!UUID.test(id)) throw notFound('Chat widget');
  const [row] = await publicStatement<{ widget: Widget | null }>(pool, 'select app_hidden.chat_widget($1::uuid) as widget', [id]);
  if (!row?.widget) throw notFound('Chat widget');
  return row.widget;
}

const conversationIdOf = (req: Request) => {
  const id = String(req.params.conversationId);
  if (!UUID.test(id)) throw notFound('Chat');
  return id;
};

/** CORS for the widget's sites (the visitor's token travels in Authorization). */
const cors = (req: Request, res: Response, widget: Widget | undefined) =>
  corsForOrigins(req, res, widget?.allowed_origins, 'Content-Type, Authorization');

const clientAddress = (req: Request) => req.ip ?? req.socket.remoteAddress ?? null;

const preflight = (path: string): PublicPage => ({
  method: 'OPTIONS',
  path,
  async handle(req, res, { pool }) {
    cors(req, res, await widgetOf(pool, String(req.params.widgetId)).catch(() => undefined));
    res.status(204).end();
  },
});

/** Runs a page with the widget found and CORS set (errors too carry CORS, so the page can read them). */
const withWidget = (run: (req: Request, res: Response, pool: pg.Pool, widget: Widget) => Promise<void>): PublicPage['handle'] =>
  async (req, res, { pool }) => {
    const widget = await widgetOf(pool, String(req.params.widgetId));
    cors(req, res, widget);
    res.set('Cache-Control', 'no-store');
    await run(req, res, pool, widget);
  };

const THREAD = '/chat/:widgetId/conversations/:conversationId/messages';

export const chatPages: PublicPage[] = [
  preflight('/chat/:widgetId'),
  preflight('/chat/:widgetId/conversations'),
  preflight(THREAD),
  {
    method: 'GET',
    path: '/chat/:widgetId',
    handle: withWidget(async (_req, res, _pool, widget) => {
      res.json({ widget_id: widget.id, name: widget.name, greeting: widget.greeting, message_max_length: CHAT_MESSAGE_MAX });
    }),
  },
  {
    method: 'POST',
    path: '/chat/:widgetId/conversations',
    handle: withWidget(async (req, res, pool, widget) => {
      const body = await jsonBody(req, Start);
      let phone: string | undefined;
      if (body.phone !== undefined) {
        phone = toE164(body.phone);
        if (!phone) throw badRequest('body.phone: a phone number with its country code (+15551230001)');
      }
      const { token, hash } = newVisitorToken();
      const [row] = await publicStatement<{ result: Record<string, unknown> }>(pool,
        'select app_hidden.chat_start($1::uuid, $2::text, $3::jsonb, $4::text, $5::text) as result',
        [widget.id, hash, JSON.stringify({ name: body.name, email: body.email, phone }), body.message, clientAddress(req)]);
      const r = row!.result;
      res.status(201).json({ conversation_id: r.conversation_id, message_id: r.message_id, token,
        response_mode: r.response_mode, created_at: r.created_at });
    }),
  },
  {
    method: 'POST',
    path: THREAD,
    handle: withWidget(async (req, res, pool, widget) => {
      const conversationId = conversationIdOf(req);
      const token = visitorToken(req);
      const body = await jsonBody(req, Post);
      const [row] = await publicStatement<{ result: Record<string, unknown> }>(pool,
        'select app_hidden.chat_post($1::uuid, $2::uuid, $3::text, $4::text) as result',
        [widget.id, conversationId, tokenHash(token), body.message]);
      const r = row!.result;
      res.status(201).json({ conversation_id: r.conversation_id, message_id: r.message_id, response_mode: r.response_mode,
        created_at: r.created_at });
    }),
  },
  {
    method: 'GET',
    path: THREAD,
    handle: withWidget(async (req, res, pool, widget) => {
      const conversationId = conversationIdOf(req);
      const token = visitorToken(req);
      const after = req.query.after;
      if (after !== undefined && (typeof after !== 'string' || !UUID.test(after))) throw badRequest('query.after: a message id (uuid)');
      const [row] = await publicStatement<{ result: unknown }>(pool,
        'select app_hidden.chat_thread($1::uuid, $2::uuid, $3::text, $4::uuid) as result',
        [widget.id, conversationId, tokenHash(token), after ?? null]);
      res.json(row!.result);
    }),
  },
];
