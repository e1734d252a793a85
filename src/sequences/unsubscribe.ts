// The one-click unsubscribe page of sequence email (RFC 8058), outside /api/v1 and with no
// sign-in: the token in the URL is the authority (random, 244 bits; only its SHA-256 is stored,
// app_private.unsubscribe_tokens; app_hidden.unsubscribe_lookup). GET shows a confirmation page and
// changes nothing (mail scanners follow links); POST, from that page's button or from the mail
// client's one-click `List-Unsubscribe=One-Click`, suppresses the address for email and cancels
// its email sequences. Both answer 404 for a token that is not one.
import type pg from 'pg';
import { publicStatement } from '../db/request.ts';
import type { PublicPage } from '../registry/area.ts';

interface Shown { organization: string; email: string; unsubscribed: boolean }

async function call(pool: pg.Pool, fn: 'unsubscribe_lookup' | 'unsubscribe_confirm', token: string): Promise<Shown | null> {
  const [row] = await publicStatement<{ result: Shown | null }>(pool, `select app_hidden.${fn}($1::text) as result`, [token]);
  return row?.result ?? null;
}

const escape = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">`
    + `<meta name="robots" content="noindex"><title>${escape(title)}</title></head>`
    + `<body style="font-family: system-ui, sans-serif; max-width: 32rem; margin: 3rem auto; padding: 0 1rem">${body}</body></html>`;
}

const notFoundPage = page('Link not valid', '<h1>This link is not valid</h1><p>It may have been copied incompletely.</p>');

function send(res: Parameters<PublicPage['handle']>[1], status: number, html: string) {
  res.status(status).set({ 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-store', 'Referrer-Policy': 'no-referrer',
    'X-Frame-Options': 'DENY', 'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'" }).send(html);
}

export const unsubscribePages: PublicPage[] = [
  {
    method: 'GET',
    path: '/unsubscribe/:token',
    async handle(req, res, { pool }) {
      const shown = await call(pool, 'unsubscribe_lookup', String(req.params.token));
      if (!shown) return send(res, 404, notFoundPage);
      send(res, 200, page('Unsubscribe', shown.unsubscribed
        ? `<h1>You are unsubscribed</h1><p>${escape(shown.email)} gets no more email from ${escape(shown.organization)}.</p>`
        : `<h1>Unsubscribe</h1><p>Stop email from ${escape(shown.organization)} to ${escape(shown.email)}?</p>`
          + `<form method="post"><button type="submit">Unsubscribe</button></form>`));
    },
  },
  {
    method: 'POST',
    path: '/unsubscribe/:token',
    async handle(req, res, { pool }) {
      const shown = await call(pool, 'unsubscribe_confirm', String(req.params.token));
      if (!shown) return send(res, 404, notFoundPage);
      send(res, 200, shown.unsubscribed
        ? page('Unsubscribed', `<h1>You are unsubscribed</h1><p>${escape(shown.email)} gets no more email from ${escape(shown.organization)}.</p>`)
        : page('Not subscribed', `<h1>Nothing to unsubscribe</h1><p>${escape(shown.email)} is on no list of ${escape(shown.organization)}.</p>`));
    },
  },
];
