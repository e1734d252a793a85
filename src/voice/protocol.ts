// The OpenAI chat-completions protocol as a voice platform speaks it to a custom language model:
// the request we accept, the answers we give (a `chat.completion`, or `chat.completion.chunk`
// events and `data: [DONE]`), and OpenAI's error shape.
import type { Response } from 'express';
import { z } from 'zod';
import { Phone } from '../platform/schemas.ts';

const Part = z.object({ type: z.string().max(50), text: z.string().max(20000).optional() }).loose();
const Message = z.object({
  role: z.enum(['system', 'developer', 'user', 'assistant', 'tool', 'function']),
  content: z.union([z.string().max(20000), z.array(Part).max(100)]).nullable().optional(),
}).loose();

/** A request: OpenAI's fields we read, the others (model, temperature, tools, …) accepted and ignored. */
export const CompletionRequest = z.object({
  model: z.string().max(200).optional(),
  messages: z.array(Message).min(1).max(1000),
  stream: z.boolean().default(false),
  metadata: z.object({
    call_id: z.string().min(1).max(200).describe('The platform\'s id of the call'),
    from: Phone.describe('The caller\'s number (E.164)'),
    to: Phone.describe('The number called: one of the organization\'s numbers'),
    transfer_number: Phone.optional().describe('Where a hand-over transfers the call (E.164)'),
  }).loose(),
}).loose();
export type CompletionRequest = z.output<typeof CompletionRequest>;

/** A message's text, whether its content is a string or parts. */
export const textOf = (m: CompletionRequest['messages'][number]): string =>
  typeof m.content === 'string' ? m.content : (m.content ?? []).map((p) => p.text ?? '').join('');

/** OpenAI's error body. */
export function sendOpenAiError(res: Response, status: number, message: string, param: string | null = null, code: string | null = null) {
  const type = status === 401 ? 'authentication_error' : status === 429 ? 'rate_limit_error' : status >= 500 ? 'server_error'
    : 'invalid_request_error';
  res.status(status).json({ error: { message, type, param, code } });
}

/** Vapi's convention for "transfer this call": a tool call the platform carries out itself. */
export const transferToolCall = (id: string, destination: string) =>
  ({ id: `call_${id}`, type: 'function' as const, function: { name: 'transferCall', arguments: JSON.stringify({ destination }) } });

export const MODEL_NAME = 'svc-receptionist';

/** A sentence-sized piece at a time: what a text-to-speech engine starts speaking from. */
export function pieces(text: string): string[] {
  const out = text.match(/[^.!?\n]+[.!?\n]*\s*/g) ?? [text];
  return out.filter((p) => p.length > 0);
}
