// The AI receptionist behind one small interface: given a conversation's context it answers
// with text, or hands the conversation to a person. Two responders:
//   - an OpenAI-compatible chat-completions client, when AI_BASE_URL is set (AI_API_KEY,
//     AI_MODEL): the organization's name, the location's hours, address and booking options,
//     and the thread are its context; it answers HANDOVER to hand over;
//   - with no AI configured, a deterministic responder that answers hours, address and how to
//     book from the same context, and hands anything else to a person.

export interface AiContext {
  organization: { name: string };
  location: {
    name: string;
    timezone: string;
    hours: { day: string; open: string; close: string }[];
    address: Record<string, string | null> | null;
    offerings: { name: string; duration_minutes: number }[];
  } | null;
  channel: 'sms' | 'chat';
  contact: { name: string | null };
  /** The last messages, oldest first; the last one is the contact's message to answer. */
  thread: { author: 'contact' | 'ai' | 'person' | 'system'; body: string }[];
}

export type AiAnswer = { kind: 'reply'; text: string } | { kind: 'handover'; reason: string };

export interface Responder {
  /** For logs: which responder this is (never its URL or key). */
  readonly name: string;
  respond(context: AiContext): Promise<AiAnswer>;
}

const DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];
const DAY_NAMES: Record<string, string> = { mon: 'Mon', tue: 'Tue', wed: 'Wed', thu: 'Thu', fri: 'Fri', sat: 'Sat', sun: 'Sun' };

export function describeHours(hours: { day: string; open: string; close: string }[]): string {
  return [...hours].sort((a, b) => DAYS.indexOf(a.day) - DAYS.indexOf(b.day) || a.open.localeCompare(b.open))
    .map((h) => `${DAY_NAMES[h.day] ?? h.day} ${h.open}-${h.close}`).join(', ');
}

export function describeAddress(address: Record<string, string | null> | null): string | null {
  if (!address?.line1) return null;
  const region = [address.region, address.postal_code].filter(Boolean).join(' ');
  return [address.line1, address.line2, address.city, region].filter(Boolean).join(', ');
}

function describeOfferings(offerings: { name: string; duration_minutes: number }[]): string {
  return offerings.map((o) => `${o.name} (${o.duration_minutes} min)`).join(', ');
}

/** What the deterministic responder recognizes, in the contact's last message. */
const INTENTS = {
  hours: /\b(hours?|open(ing)?|clos(e|ed|ing))\b/i,
  address: /\b(address|where are you|located|location|directions|find you)\b/i,
  booking: /\b(book(ing)?|appointments?|schedul(e|ing)|reserv(e|ation)|slots?)\b/i,
};

export const deterministicResponder: Responder = {
  name: 'deterministic',
  async respond(ctx) {
    const asked = ctx.thread.at(-1)?.body ?? '';
    const place = ctx.location;
    const parts: string[] = [];
    for (const [intent, pattern] of Object.entries(INTENTS)) {
      if (!pattern.test(asked)) continue;
      if (!place) return { kind: 'handover', reason: 'the conversation has no location to answer for' };
      if (intent === 'hours') {
        if (!place.hours.length) return { kind: 'handover', reason: 'the location has no opening hours' };
        parts.push(`${place.name} is open ${describeHours(place.hours)} (${place.timezone} time).`);
      } else if (intent === 'address') {
        const where = describeAddress(place.address);
        if (!where) return { kind: 'handover', reason: 'the location has no address' };
        parts.push(`You will find ${place.name} at ${where}.`);
      } else {
        parts.push(place.offerings.length
          ? `To book at ${place.name}, reply with the service (${describeOfferings(place.offerings)}) and a day and time that suit you, and we will confirm.`
          : `To book at ${place.name}, reply with a day and time that suit you, and we will confirm.`);
      }
    }
    if (!parts.length) return { kind: 'handover', reason: 'not a question about hours, address or booking' };
    return { kind: 'reply', text: parts.join(' ') };
  },
};

/** The system prompt: who the assistant is, what it knows, and how it hands over. */
export function systemPrompt(ctx: AiContext): string {
  const lines = [
    `You are the receptionist of ${ctx.organization.name}, answering ${ctx.channel === 'sms' ? 'text messages' : 'a web chat'} from a client`
      + `${ctx.contact.name ? ` (${ctx.contact.name})` : ''}. Answer briefly and kindly, in the client's language, in plain text.`,
    'Only state facts given here. If the client needs anything you cannot answer from these facts, or asks for a person, '
      + 'answer exactly HANDOVER and nothing else: a team member will take over.',
  ];
  const place = ctx.location;
  if (place) {
    lines.push(`Location: ${place.name} (time zone ${place.timezone}).`);
    lines.push(place.hours.length ? `Opening hours: ${describeHours(place.hours)}.` : 'Opening hours: not known.');
    const where = describeAddress(place.address);
    if (where) lines.push(`Address: ${where}.`);
    lines.push(place.offerings.length
      ? `Bookable services: ${describeOfferings(place.offerings)}. To book, ask for the service and a day and time; a team member confirms.`
      : 'To book, ask for a day and time; a team member confirms.');
  }
  return lines.join('\n');
}

const HANDOVER = /^\s*HANDOVER\s*\.?\s*$/;

export function openAiResponder(opts: { baseUrl: string; apiKey?: string; model: string; timeoutMs?: number }): Responder {
  const endpoint = `${opts.baseUrl.replace(/\/+$/, '')}/chat/completions`;
  return {
    name: 'openai-compatible',
    async respond(ctx) {
      const messages = [
        { role: 'system', content: systemPrompt(ctx) },
        ...ctx.thread.map((m) => ({ role: m.author === 'contact' ? 'user' : 'assistant', content: m.body })),
      ];
      const res = await fetch(endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(opts.apiKey ? { authorization: `Bearer ${opts.apiKey}` } : {}) },
        body: JSON.stringify({ model: opts.model, messages, temperature: 0.2, max_tokens: 300 }),
        signal: AbortSignal.timeout(opts.timeoutMs ?? 20_000),
      });
      const text = await res.text();
      if (!res.ok) throw new Error(`the AI service answered ${res.status}: ${text.slice(0, 200)}`);
      let content: unknown;
      try {
        content = (JSON.parse(text) as { choices?: { message?: { content?: unknown } }[] }).choices?.[0]?.message?.content;
      } catch {
        throw new Error('the AI service answered something that is not JSON');
      }
      if (typeof content !== 'string') throw new Error('the AI service answered no message');
      if (!content.trim() || HANDOVER.test(content)) return { kind: 'handover', reason: 'the AI handed over' };
      return { kind: 'reply', text: content.trim() };
    },
  };
}

/** The responder the environment configures: AI_BASE_URL (with AI_API_KEY, AI_MODEL) or the deterministic one. */
export function responderFromEnv(env: NodeJS.ProcessEnv = process.env): Responder {
  const baseUrl = env.AI_BASE_URL?.trim();
  if (!baseUrl) return deterministicResponder;
  if (!URL.canParse(baseUrl) || !/^https?:$/.test(new URL(baseUrl).protocol)) {
    throw new Error('AI_BASE_URL must be an http:// or https:// URL');
  }
  return openAiResponder({ baseUrl, apiKey: env.AI_API_KEY || undefined, model: env.AI_MODEL || 'gpt-4o-mini' });
}
