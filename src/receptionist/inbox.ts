// The dashboard inbox (/dashboard/inbox): the conversations the signed-in person may read (the
// policies of app_public.conversations, as conversations_list), those waiting for a person
// first, newest message first; a conversation's page shows the thread, a reply form
// (conversations_reply's own handler under the person's claims) and "Let the AI answer"
// (conversations_resume). Plain forms with CSRF, as every dashboard page; no script.
import type pg from 'pg';
import { conversationsReply, conversationsResume } from '../conversations/writes.ts';
import { esc } from '../dashboard/html.ts';
import { dashboardPage, FormError, type View } from '../dashboard/pages.ts';
import type { Claims, Tx } from '../db/request.ts';
import { toQuery, type Sql } from '../db/sql.ts';

interface Row { id: string; channel: string; ai_held: boolean; contact: string | null; last_body: string | null; last_at: Date | null }

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const when = (d: Date | null) => (d ? d.toISOString().slice(0, 16).replace('T', ' ') : '');

async function list(c: pg.PoolClient): Promise<string> {
  const { rows } = await c.query<Row>(`select cv.id, cv.channel, cv.ai_held or cv.channel = 'email' as ai_held,
      coalesce(ct.name, ct.phone, ct.email::text) as contact, m.body as last_body, m.created_at as last_at
    from app_public.conversations cv
    left join app_public.contacts ct on ct.organization_id = cv.organization_id and ct.id = cv.contact_id
    left join lateral (select body, created_at from app_public.conversation_messages x
                        where x.organization_id = cv.organization_id and x.conversation_id = cv.id
                        order by created_at desc, id desc limit 1) m on true
   order by (cv.ai_held and cv.channel <> 'email') desc, m.created_at desc nulls last, cv.id
   limit 200`);
  if (!rows.length) return '<p>No conversations yet.</p>';
  return `<table><thead><tr><th>Contact</th><th>Channel</th><th>Who answers</th><th>Last message</th><th>At</th></tr></thead><tbody>
${rows.map((r) => `<tr data-conversation="${esc(r.id)}"><td><a href="/dashboard/inbox/${esc(r.id)}">${esc(r.contact ?? 'Unknown')}</a></td>
<td>${esc(r.channel)}</td><td>${r.ai_held ? '<strong>Waiting for a person</strong>' : 'AI'}</td>
<td>${esc((r.last_body ?? '').slice(0, 120))}</td><td>${esc(when(r.last_at))}</td></tr>`).join('\n')}
</tbody></table>`;
}

function conversationId(view: View): string {
  const id = String(view.req.params.conversationId ?? '');
  if (!UUID.test(id)) throw new FormError('Not a conversation');
  return id;
}

async function thread(c: pg.PoolClient, view: View): Promise<string> {
  const id = String(view.req.params.conversationId ?? '');
  const { rows: [cv] } = UUID.test(id)
    ? await c.query<{ channel: string; ai_held: boolean; contact: string | null }>(`select cv.channel, cv.ai_held,
        coalesce(ct.name, ct.phone, ct.email::text) as contact from app_public.conversations cv
        left join app_public.contacts ct on ct.organization_id = cv.organization_id and ct.id = cv.contact_id where cv.id = $1`, [id])
    : { rows: [] };
  if (!cv) {
    // another organization's, out of the person's reach, or gone: the same answer for all three
    view.status = 404;
    return '<p>This conversation is not in your inbox.</p><p><a href="/dashboard/inbox">Back to the inbox</a></p>';
  }
  const { rows: messages } = await c.query<{ author: string; body: string; created_at: Date }>(`select author, body, created_at
    from app_public.conversation_messages where conversation_id = $1 order by created_at, id`, [id]);
  const csrf = `<input type="hidden" name="csrf" value="${esc(view.csrf)}">`;
  const base = `/dashboard/inbox/${esc(id)}`;
  return `<p><a href="/dashboard/inbox">Back to the inbox</a></p>
<h2>${esc(cv.contact ?? 'Unknown')} (${esc(cv.channel)})</h2>
<p>${cv.ai_held || cv.channel === 'email' ? '<strong>Waiting for a person</strong>' : 'The AI answers'}</p>
<ol class="thread">${messages.map((m) => `<li data-author="${esc(m.author)}"><small>${esc(m.author)} · ${esc(when(m.created_at))}</small><br>${esc(m.body)}</li>`).join('\n')}</ol>
<form method="post" action="${base}/reply"><fieldset><legend>Reply</legend>${csrf}
<label>Message <textarea name="body" maxlength="1600" required></textarea></label><button type="submit">Send</button></fieldset></form>
${cv.channel === 'email' ? '' : `<form method="post" action="${base}/resume">${csrf}<button type="submit">Let the AI answer</button></form>`}`;
}

/** A transaction of the dashboard as the operations' Tx (their handlers run on it unchanged). */
const asTx = (c: pg.PoolClient): Tx => ({
  query: async <R>(q: Sql) => (await c.query(toQuery(q))).rows as R[],
  execute: async <R>(q: Sql) => (await c.query(toQuery(q))).rows as R[],
});

export const inboxPages = [
  ...dashboardPage('/dashboard/inbox', 'Inbox', list),
  ...dashboardPage('/dashboard/inbox/:conversationId', 'Conversation', thread, {
    async reply(c, form, view) {
      const body = (form.get('body') ?? '').trim();
      if (!body || body.length > 1600) throw new FormError('Write a message of 1 to 1600 characters');
      const run = conversationsReply.run as { handler: (tx: Tx, ctx: { input: unknown; claims: Claims; config: unknown }) => Promise<unknown> };
      await run.handler(asTx(c), { input: { conversationId: conversationId(view), body }, claims: undefined as never, config: view.deps.config });
      return { notice: 'Sent. The AI stays quiet until you let it answer.' };
    },
    async resume(c, _form, view) {
      const run = conversationsResume.run as { statement: (i: { conversationId: string }) => Sql };
      await c.query(toQuery(run.statement({ conversationId: conversationId(view) })));
      return { notice: 'The AI answers this conversation again.' };
    },
  }),
];
