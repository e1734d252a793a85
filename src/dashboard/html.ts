// Server-rendered HTML of the dashboard: every value escaped, no script, plain forms that work
// without JavaScript. Pages are never cached (they carry CSRF tokens and a person's data); their
// one stylesheet (src/dashboard/assets.ts) is, and styles the plain elements, no classes needed.
import type { Response } from 'express';
import { STYLESHEET_HREF } from './assets.ts';
import type { SignedIn } from './session.ts';

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
/** Text escaped for HTML element content and quoted attribute values. */
export const esc = (value: unknown): string => String(value ?? '').replace(/[&<>"']/g, (c) => ESCAPES[c]!);

const NAV = [['/dashboard/inbox', 'Inbox'], ['/dashboard/keys', 'Keys'], ['/dashboard/people', 'People'], ['/dashboard/agent-access', 'Agent access'],
  ['/dashboard/organization', 'Organization'], ['/dashboard/connected-apps', 'Connected apps'], ['/dashboard/webhooks', 'Webhooks']] as const;

/** A whole page: title, navigation for a signed-in person (with sign-out, a form), the body. */
export function page(title: string, body: string, opts: { person?: SignedIn; csrf?: string; notice?: string; error?: string } = {}): string {
  const nav = opts.person
    ? `<nav>${NAV.map(([href, label]) => `<a href="${href}">${label}</a>`).join(' · ')}
      <form method="post" action="/dashboard/sign-out" class="inline"><input type="hidden" name="csrf" value="${esc(opts.csrf)}">
      <button type="submit">Sign out</button></form>
      <span class="who">${esc(opts.person.name)} (${esc(opts.person.role)})</span></nav>`
    : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)} · Dashboard</title>
<link rel="stylesheet" href="${STYLESHEET_HREF}">
<style>.inline{display:inline}.inline button{width:auto}.notice{background:#e8f5e9;color:#1b5e20;padding:.5rem}
.error{background:#fdecea;color:#b71c1c;padding:.5rem}
.secret{font-family:monospace;font-size:1.1rem;background:#fff8e1;color:#333;padding:.5rem;user-select:all}
.who{margin-left:1rem}</style>
</head><body><header>${nav}</header><main>
<h1>${esc(title)}</h1>
${opts.notice ? `<p class="notice" role="status">${esc(opts.notice)}</p>` : ''}${opts.error ? `<p class="error" role="alert">${esc(opts.error)}</p>` : ''}
${body}
</main></body></html>`;
}

/** Sends an HTML page, not cached, framed by nobody. */
export function sendPage(res: Response, status: number, html: string): void {
  res.status(status).set({
    'Content-Type': 'text/html; charset=utf-8',
    'Cache-Control': 'no-store',
    'X-Frame-Options': 'DENY',
    'Content-Security-Policy': "default-src 'none'; style-src 'self' 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    'Referrer-Policy': 'no-referrer',
  }).send(html);
}
