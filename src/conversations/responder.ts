// What the receptionist is given about a conversation (app_private.conversation_ai_context) and
// how it describes a location's hours and address: shared by the receptionist's two brains
// (src/receptionist/), which answer the conversations of this area.

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
