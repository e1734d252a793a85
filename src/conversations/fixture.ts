// The conversations' part of the tenant fixture (operator-cli.md): `contacts[].conversations`
// with their messages, added to the contacts' entries (a contact with conversations needs a
// ref: the contacts part records ids by ref), and `chat_widgets`, the web chat widgets of the
// organization's sites (src/conversations/chat.ts).
import { z } from 'zod';
import { FixtureError, instant, ref, type FixtureSection } from '../admin/fixture.ts';

const MessageEntry = z.strictObject({
  direction: z.enum(['inbound', 'outbound']),
  body: z.string().min(1).max(20000),
  author: z.enum(['contact', 'ai', 'person', 'system']).optional(),
  author_ref: ref.optional(),
  subject: z.string().max(998).optional(),
  at: instant.optional(),
});

const ConversationEntry = z.strictObject({
  ref: ref.optional(),
  channel: z.enum(['email', 'sms', 'chat']),
  location_ref: ref.optional(),
  ai_held: z.boolean().default(false),
  subject: z.string().max(998).optional(),
  business_address: z.string().max(320).optional(),
  messages: z.array(MessageEntry).default([]),
});

const ChatWidgetEntry = {
  ref: ref.optional(),
  name: z.string().min(1).max(200),
  location_ref: ref.optional(),
  // sites: http or https (an opaque origin, "null", would admit any sandboxed page)
  allowed_origins: z.array(z.url({ protocol: /^https?$/ }).max(200)).max(50).default([]),
  greeting: z.string().min(1).max(1000).optional(),
};

type Part = {
  chat_widgets: z.output<z.ZodObject<typeof ChatWidgetEntry>>[];
  organization: { default_sms_number?: string | null; sending_email_domain?: string | null };
  contacts: { ref?: string; conversations: z.output<typeof ConversationEntry>[] }[];
};

export const conversationsFixture: FixtureSection = {
  keys: { chat_widgets: { list: ChatWidgetEntry } },
  extend: { contacts: { conversations: z.array(ConversationEntry).default([]) } },
  // the demo organization's website chat, at its downtown location
  demo: { chat_widgets: [{ ref: 'website_chat', name: 'Website chat', location_ref: 'downtown', allowed_origins: ['http://localhost:8080'],
    greeting: 'Hi! Ask us about opening hours or booking.' }] },
  async apply(ctx, fixture) {
    const f = fixture as Part;
    const org = ctx.organizationId;
    for (const [i, w] of f.chat_widgets.entries()) {
      const where = `chat_widgets[${i}]`;
      const [row] = await ctx.q<{ id: string }>(
        `insert into app_public.chat_widgets (organization_id, location_id, name, allowed_origins, greeting)
         values ($1, $2, $3, $4, $5) returning id`,
        [org, w.location_ref ? ctx.resolve('location', w.location_ref, `${where}.location_ref`) : null, w.name,
          w.allowed_origins.map((o) => new URL(o).origin), w.greeting ?? null]);
      ctx.remember('chat_widget', w.ref, row!.id, where);
    }
    for (const [i, contact] of f.contacts.entries()) {
      if (!contact.conversations.length) continue;
      if (contact.ref === undefined) throw new FixtureError(`contacts[${i}]: a contact with conversations needs a ref`);
      const contactId = ctx.resolve('contact', contact.ref, `contacts[${i}].ref`);
      for (const [j, cv] of contact.conversations.entries()) {
        const where = `contacts[${i}].conversations[${j}]`;
        if (cv.channel === 'email' && cv.ai_held) throw new FixtureError(`${where}.ai_held: an email conversation has no AI to hold`);
        const location = cv.location_ref ? ctx.resolve('location', cv.location_ref, `${where}.location_ref`) : null;
        const [addr] = await ctx.q<{ address: string | null }>(
          `select case $2::text
             when 'sms' then coalesce((select l.sms_number from app_public.locations l where l.organization_id = $1 and l.id = $3),
                                      o.default_sms_number)
             when 'email' then 'inbox@' || coalesce(o.sending_email_domain, 'localhost') end as address
             from app_public.organizations o where o.id = $1`, [org, cv.channel, location]);
        const address = cv.business_address ?? addr?.address ?? null;
        if (cv.channel === 'sms' && !address) {
          throw new FixtureError(`${where}: an SMS conversation needs a number: the location's sms_number or the organization's default`);
        }
        const times = cv.messages.map((m) => m.at).filter((t): t is string => t !== undefined).map((t) => Date.parse(t));
        const first = times.length ? new Date(Math.min(...times)).toISOString() : null;
        const last = times.length ? new Date(Math.max(...times)).toISOString() : null;
        let row: { id: string } | undefined;
        try {
          [row] = await ctx.q<{ id: string }>(
            `insert into app_public.conversations (organization_id, contact_id, location_id, channel, business_address, subject,
               ai_held, held_at, created_at, last_message_at)
             values ($1, $2, $3, $4, $5, $6, $7, case when $7 then now() end, coalesce($8::timestamptz, now()),
               coalesce($9::timestamptz, now())) returning id`,
            [org, contactId, location, cv.channel, address, cv.subject ?? null, cv.ai_held, first, last]);
        } catch (e) {
          const code = (e as { code?: string }).code;
          if (code === '23505') throw new FixtureError(`${where}: the contact already has an SMS conversation on ${address}`);
          if (code === '23514') throw new FixtureError(`${where}: business_address is not an E.164 number`);
          throw e;
        }
        ctx.remember('conversation', cv.ref, row!.id, where);
        for (const [k, m] of cv.messages.entries()) {
          const mWhere = `${where}.messages[${k}]`;
          const author = m.author_ref ? 'person' : (m.author ?? (m.direction === 'inbound' ? 'contact' : 'ai'));
          if ((author === 'contact') !== (m.direction === 'inbound')) {
            throw new FixtureError(`${mWhere}.author: inbound messages are the contact's, outbound ones the ai's, a person's or the system's`);
          }
          if (author === 'ai' && cv.channel === 'email') throw new FixtureError(`${mWhere}.author: an email conversation has no AI`);
          const person = m.author_ref ? ctx.resolve('person', m.author_ref, `${mWhere}.author_ref`) : null;
          await ctx.q(
            `insert into app_public.conversation_messages (organization_id, conversation_id, channel, direction, author,
               author_person_id, body, subject, status, created_at)
             values ($1, $2, $3, $4, $5, $6, $7, $8, case $4 when 'inbound' then 'received' else 'sent' end,
               coalesce($9::timestamptz, now()))`,
            [org, row!.id, cv.channel, m.direction, author, person, m.body, m.subject ?? null, m.at ?? null]);
        }
      }
    }
  },
};
