// The built-in receptionist (no model configured): a deterministic dialogue over the same tools
// the model gets. Words are matched case-insensitively as whole words in the contact's last
// message:
//   a number answering the pending offer (24 h) → that service, or that slot booked (or moved);
//   YES after "Reply YES to cancel" → cancelled;
//   reschedule / change / move → slots for the upcoming appointment;
//   cancel → "Reply YES to cancel your …";
//   book, booking, appointment, … → "Which service? 1) … 2) …", then up to three slots;
//   hours, address, an FAQ entry's keyword → the answer;
//   a person, or anything else → hand-over.
// Its pending offer (DialogueState) is stored with its answer (app_private.receptionist_states).
import { describeAddress, describeHours } from '../conversations/responder.ts';
import type { Answer, DialogueState, ReceptionistContext, Slot, ToolRunner } from './types.ts';


const has = (text: string, words: readonly string[]) => new RegExp(`\\b(${words.join('|')})\\b`, 'i').test(text);
const BOOK = ['book', 'booking', 'appointment', 'schedule', 'available', 'availability', 'reserve'];
const RESCHEDULE = ['reschedule', 'change', 'move'];
const PERSON = ['human', 'person', 'agent', 'representative', 'someone'];
const HOURS = /\b(hours?|open(ing)?|clos(e|ed|ing))\b/i;
const ADDRESS = /\b(address|where are you|located|directions|find you)\b/i;
const OFFER_VALID_MS = 24 * 3600 * 1000;
const SLOT_DAYS = 14;

/** `Tue Dec 8, 10:00 AM` in the location's time zone. */
export function slotLabel(iso: string, timezone: string): string {
  const parts = Object.fromEntries(new Intl.DateTimeFormat('en-US', {
    timeZone: timezone, weekday: 'short', month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit', hour12: true,
  }).formatToParts(new Date(iso)).map((p) => [p.type, p.value]));
  return `${parts.weekday} ${parts.month} ${parts.day}, ${parts.hour}:${parts.minute} ${parts.dayPeriod}`;
}
const onAt = (iso: string, tz: string) => slotLabel(iso, tz).replace(', ', ' at ');

/** YYYY-MM-DD of `now` in the time zone, then the days after it. */
function days(now: Date, timezone: string, count: number): string[] {
  const today = new Intl.DateTimeFormat('en-CA', { timeZone: timezone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(now);
  const base = Date.parse(`${today}T00:00:00Z`);
  return Array.from({ length: count }, (_, i) => new Date(base + i * 86400000).toISOString().slice(0, 10));
}

/**
 * How to cancel: on SMS a bare CANCEL is the carriers' opt-out keyword (it would stop every text
 * to the number), so the SMS confirmation asks for two words.
 */
const cancelHint = (channel: string) => (channel === 'sms' ? 'Reply CANCEL APPOINTMENT to cancel.' : 'Reply CANCEL to cancel.');

interface Appointment { id: string; offering_id: string | null; start_time: string; end_time: string; status: string; kind: string }

export async function builtInAnswer(ctx: ReceptionistContext, tools: ToolRunner, opts: { informationOnly: boolean }): Promise<Answer> {
  const text = (ctx.thread.at(-1)?.body ?? '').trim();
  const tz = ctx.location?.timezone ?? 'UTC';
  const now = new Date(ctx.now);
  let calls = 0;
  const call = (name: string, args: Record<string, unknown>) => tools(name, args, ++calls);
  const reply = (t: string, state: DialogueState | null = null, appointment_id?: string): Answer =>
    ({ kind: 'reply', text: t, state, appointment_id, brain: 'built-in' });
  const handover = (reason: string): Answer => ({ kind: 'handover', reason, brain: 'built-in' });
  const offeringName = (id: string | null) => ctx.offerings.find((o) => o.id === id)?.name ?? 'appointment';

  const information = (): Answer | null => {
    const parts: string[] = [];
    const place = ctx.location;
    if (place && HOURS.test(text) && place.hours.length) parts.push(`${place.name} is open ${describeHours(place.hours)} (${place.timezone} time).`);
    const where = place ? describeAddress(place.address) : null;
    if (place && where && ADDRESS.test(text)) parts.push(`You will find ${place.name} at ${where}.`);
    for (const entry of ctx.receptionist.faq ?? []) {
      if (entry.keywords?.length && has(text, entry.keywords.map((k) => k.replace(/[^\p{L}\p{N} ]/gu, '')).filter(Boolean))) parts.push(entry.answer);
    }
    return parts.length ? reply(parts.join(' ')) : null;
  };
  if (opts.informationOnly) return information() ?? handover('the AI model is unavailable');
  if (!ctx.location_id) return information() ?? handover('the conversation has no location to book at');

  /** Up to three of the earliest open slots in the next 14 days, as the numbered offer. */
  const offerSlots = async (offering_id: string | null, appointment_id?: string, intro = ''): Promise<Answer> => {
    const slots: Slot[] = [];
    for (const date of days(now, tz, SLOT_DAYS)) {
      const r = await call('appointments_availability', { date, ...(offering_id ? { offering_id } : {}) });
      if (!r.ok) return handover(`availability could not be read: ${r.error.error}`);
      for (const s of (r.body as { slots: Slot[] }).slots) {
        if (slots.length < 3) slots.push(s);
      }
      if (slots.length >= 3) break;
    }
    if (!slots.length) return handover(`no open slot in the next ${SLOT_DAYS} days`);
    const lines = slots.map((s, i) => `${i + 1}) ${slotLabel(s.start, tz)}`);
    const choices = slots.length === 1 ? 'Reply 1 to book.' : `Reply ${slots.map((_, i) => i + 1).join(', ').replace(/, (\d)$/, ' or $1')} to book.`;
    return reply(`${intro}${lines.join('\n')}\n${choices}`, { kind: 'pick_slot', slots, offering_id, appointment_id });
  };
  const askOffering = (appointment_id?: string): Promise<Answer> | Answer => {
    if (ctx.offerings.length > 1) {
      return reply(`Which service? ${ctx.offerings.map((o, i) => `${i + 1}) ${o.name}`).join(' ')}`,
        { kind: 'pick_offering', offering_ids: ctx.offerings.map((o) => o.id), appointment_id });
    }
    return offerSlots(ctx.offerings[0]?.id ?? null, appointment_id);
  };
  const upcoming = async (): Promise<Appointment | null | 'error'> => {
    const r = await call('appointments_list', { from: now.toISOString(), to: new Date(now.getTime() + 92 * 86400000).toISOString() });
    if (!r.ok) return 'error';
    return (r.body as { items: Appointment[] }).items.find((a) => a.status === 'booked' && a.kind === 'appointment') ?? null;
  };

  // an answer to the pending offer
  const pending = ctx.state && now.getTime() - Date.parse(ctx.state.at) < OFFER_VALID_MS ? ctx.state.state : null;
  const number = /^\s*(\d{1,2})\s*[.)]?\s*$/.exec(text);
  if (pending && number) {
    const n = Number(number[1]);
    if (pending.kind === 'pick_offering' && n >= 1 && n <= pending.offering_ids.length) {
      return offerSlots(pending.offering_ids[n - 1]!, pending.appointment_id);
    }
    if (pending.kind === 'pick_slot' && n >= 1 && n <= pending.slots.length) {
      const slot = pending.slots[n - 1]!;
      const r = pending.appointment_id
        ? await call('appointments_reschedule', { appointmentId: pending.appointment_id, start_time: slot.start, end_time: slot.end })
        : await call('appointments_create', { start_time: slot.start, end_time: slot.end,
          ...(pending.offering_id ? { offering_id: pending.offering_id } : {}) });
      if (!r.ok) {
        if (r.error.statusCode === 409) {
          return offerSlots(pending.offering_id, pending.appointment_id, 'Sorry, that time was just taken. ');
        }
        return handover(`the booking was refused: ${r.error.error}`);
      }
      const a = r.body as Appointment;
      const where = ctx.location?.name ?? '';
      return reply(`${pending.appointment_id ? 'Moved' : 'Booked'}: ${offeringName(a.offering_id)} on ${onAt(a.start_time, tz)}`
        + `${where ? ` at ${where}` : ''}. ${cancelHint(ctx.channel)}`, null, a.id);
    }
  }
  if (pending?.kind === 'confirm_cancel' && /^\s*yes\b/i.test(text)) {
    const r = await call('appointments_cancel', { appointmentId: pending.appointment_id });
    if (!r.ok) return handover(`the cancellation was refused: ${r.error.error}`);
    const a = r.body as Appointment;
    return reply(`Cancelled: ${offeringName(a.offering_id)} on ${onAt(a.start_time, tz)}.`, null, a.id);
  }

  if (has(text, RESCHEDULE)) {
    const a = await upcoming();
    if (a === 'error') return handover('the appointments could not be read');
    if (!a) return reply('You have no upcoming appointment to move. Reply BOOK to book one.');
    return offerSlots(a.offering_id, a.id, `Your ${offeringName(a.offering_id)} is on ${onAt(a.start_time, tz)}. New times:\n`);
  }
  if (has(text, ['cancel'])) {
    const a = await upcoming();
    if (a === 'error') return handover('the appointments could not be read');
    if (!a) return reply('You have no upcoming appointment to cancel.');
    return reply(`Reply YES to cancel your ${offeringName(a.offering_id)} on ${onAt(a.start_time, tz)}.`,
      { kind: 'confirm_cancel', appointment_id: a.id });
  }
  if (has(text, BOOK)) return askOffering();
  if (!has(text, PERSON)) {
    const info = information();
    if (info) return info;
  }
  return handover(has(text, PERSON) ? 'the contact asked for a person' : 'a message the receptionist cannot answer');
}
