// A voice platform in tests: it sends a call's turns as chat-completions requests, each with the
// whole transcript so far, as Vapi and Retell do.
import { COMPLETIONS_PATH } from '../../src/voice/completions.ts';

export interface Platform { url: string; secret: string }
export interface Reply { status: number; headers: Headers; text: string; body: any }

export async function post(platform: Platform, body: unknown, opts: { secret?: string | null; raw?: string; contentType?: string } = {}): Promise<Reply> {
  const secret = opts.secret === undefined ? platform.secret : opts.secret;
  const res = await fetch(platform.url + COMPLETIONS_PATH, {
    method: 'POST',
    headers: { 'content-type': opts.contentType ?? 'application/json', ...(secret ? { authorization: `Bearer ${secret}` } : {}) },
    body: opts.raw ?? JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown;
  try { parsed = JSON.parse(text); } catch { parsed = undefined; }
  return { status: res.status, headers: res.headers, text, body: parsed };
}

/** The chunks of an event stream (without [DONE]). */
export const chunksOf = (text: string): any[] => text.split('\n\n').map((e) => e.replace(/^data: /, '').trim())
  .filter((d) => d && d !== '[DONE]').map((d) => JSON.parse(d));

/** The words of an answer, streamed or not. */
export const wordsOf = (r: Reply): string => r.body?.choices?.[0]?.message?.content
  ?? chunksOf(r.text).map((ch) => ch.choices[0].delta.content ?? '').join('');

/** One call: each `say` sends the transcript so far plus the caller's new words; the answer joins the transcript. */
export function call(platform: Platform, metadata: { call_id: string; from: string; to: string; transfer_number?: string }) {
  const messages: { role: string; content: string }[] = [{ role: 'system', content: 'You are a receptionist.' }];
  return {
    messages,
    async say(words: string, opts: { stream?: boolean } = {}): Promise<Reply> {
      messages.push({ role: 'user', content: words });
      const r = await post(platform, { model: 'custom', messages, stream: opts.stream ?? false, metadata, temperature: 0.3 });
      if (r.status === 200) messages.push({ role: 'assistant', content: wordsOf(r) });
      return r;
    },
  };
}
