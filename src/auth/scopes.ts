// The scope catalog (spec: Authentication 5). me_get serves it with these labels.
export const SCOPES = {
  'contacts:read': 'Search and read contacts',
  'contacts:write': 'Create and update contacts, notes, tags, suppression, SMS consent, enroll contacts in sequences or cancel them through events',
  'sequences:read': 'Read sequences, enrollments, send logs, totals, a broadcast\'s schedule and runs',
  'sequences:write': 'Create, change, activate, pause, resume, duplicate sequences; enroll and cancel; set, start, pause a schedule; cancel one run',
  'appointments:read': 'Read appointments, calendars, locations, booking options, open slots, territories',
  'appointments:write': 'Book, change, reschedule, cancel appointments, including attendee details',
  'conversations:read': 'Read conversations and messages',
  'conversations:write': 'Send an SMS, reply, hold or resume the AI (a staff member: only own clients, while their SMS setting is on)',
  'calls:read': 'Read calls and transcripts',
  'audiences:read': 'Read and count audiences, list their contacts',
  'audiences:write': 'Create, change, archive, restore audiences; add and remove members',
  'forms:read': 'Read forms, fields and submissions',
} as const;

export type Scope = keyof typeof SCOPES;
export const ALL_SCOPES = Object.keys(SCOPES) as Scope[];
export const POWERS = ['contacts', 'sequences', 'appointments', 'staff'] as const;
export type Power = (typeof POWERS)[number];
