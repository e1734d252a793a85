// Sign-in by email link, and sign-out:
//   GET  /dashboard/sign-in           the form asking for an email address
//   POST /dashboard/sign-in           a one-time link to each active person with that address
//                                     (one per organization), the same answer either way
//   GET  /dashboard/sign-in/link      the link's landing page: a button that posts the token
//                                     (mail scanners that follow links spend nothing)
//   POST /dashboard/sign-in/link      the link spent, a fresh session opened, on to return_to
//   POST /dashboard/sign-out          the session ended
// In sink mode (EMAIL_TRANSPORT=sink) the link is also logged, so `npm start` users can sign in.
import type { Request, Response } from 'express';
import { log } from '../log.ts';
import type { PublicPage } from '../registry/area.ts';
import { esc, page, sendPage } from './html.ts';
import {
  checkCsrf, csrfField, endSession, HOME_PATH, inRequestTransaction, loadSession, randomToken, readForm, safeReturnTo,
  setSessionCookie, sha256, SIGN_IN_PATH, type PageDeps,
} from './session.ts';

const LINK_PATH = '/dashboard/sign-in/link';
const EMAIL = /^[^\s@<>()",;:\\[\]]{1,64}@[^\s@<>()",;:\\[\]]{1,255}$/;
const TOKEN = /^[A-Za-z0-9_-]{43}$/;

function signInForm(req: Request, res: Response, deps: PageDeps, returnTo: string | null, message?: { notice?: string; error?: string }) {
  return page('Sign in', `<form method="post" action="${SIGN_IN_PATH}">${csrfField(req, res, deps)}
  ${returnTo ? `<input type="hidden" name="return_to" value="${esc(returnTo)}">` : ''}
  <label>Email address <input type="email" name="email" required autocomplete="email"></label>
  <button type="submit">Send me a sign-in link</button></form>`, message);
}

const refused = (req: Request, res: Response, deps: PageDeps) =>
  sendPage(res, 403, signInForm(req, res, deps, null, { error: 'The form was out of date: please try again.' }));

export const signInPages: PublicPage[] = [
  {
    method: 'GET',
    path: SIGN_IN_PATH,
    async handle(req, res, deps) {
      const returnTo = safeReturnTo(req.query.return_to);
      if (await loadSession(req, deps)) return void res.redirect(303, returnTo ?? HOME_PATH);
      sendPage(res, 200, signInForm(req, res, deps, returnTo));
    },
  },
  {
    method: 'POST',
    path: SIGN_IN_PATH,
    async handle(req, res, deps) {
      const form = await readForm(req);
      if (!checkCsrf(req, form, deps)) return refused(req, res, deps);
      const email = (form.get('email') ?? '').trim();
      const returnTo = safeReturnTo(form.get('return_to'));
      if (!EMAIL.test(email)) {
        return sendPage(res, 400, signInForm(req, res, deps, returnTo, { error: 'Enter an email address.' }));
      }
      await inRequestTransaction(deps.pool, async (c) => {
        const { rows } = await c.query('select * from app_hidden.dashboard_link_people($1)', [email]);
        for (const p of rows as { organization_id: string; person_id: string; organization_name: string }[]) {
          const token = randomToken();
          const link = `${deps.config.baseUrl}${LINK_PATH}?token=${token}`;
          const body = `Sign in to the dashboard of ${p.organization_name}:\n\n${link}\n\n`
            + 'The link works once, within 15 minutes. If you did not ask for it, ignore this email.\n';
          await c.query('select app_hidden.dashboard_issue_link($1, $2, $3, $4, $5, $6, $7)',
            [p.organization_id, p.person_id, sha256(token), returnTo, email, `Sign in to ${p.organization_name}`, body]);
          // the local sink never leaves the machine: the log is how a local user gets the link
          if (deps.config.emailTransport === 'sink') log.info({ organization_id: p.organization_id, link }, 'dashboard sign-in link (sink mode)');
        }
      });
      sendPage(res, 200, page('Check your email',
        `<p>If ${esc(email)} belongs to someone of an organization here, a sign-in link is on its way. It works once, within 15 minutes.</p>`));
    },
  },
  {
    method: 'GET',
    path: LINK_PATH,
    async handle(req, res, deps) {
      const token = typeof req.query.token === 'string' && TOKEN.test(req.query.token) ? req.query.token : '';
      if (!token) return sendPage(res, 400, page('Sign in', `<p>This sign-in link is incomplete. <a href="${SIGN_IN_PATH}">Ask for a new one</a>.</p>`));
      sendPage(res, 200, page('Sign in', `<form method="post" action="${LINK_PATH}">${csrfField(req, res, deps)}
        <input type="hidden" name="token" value="${esc(token)}"><button type="submit">Sign in</button></form>`));
    },
  },
  {
    method: 'POST',
    path: LINK_PATH,
    async handle(req, res, deps) {
      const form = await readForm(req);
      if (!checkCsrf(req, form, deps)) return refused(req, res, deps);
      const token = form.get('token') ?? '';
      // the session id is drawn here, whatever cookie the browser brought: no fixation
      const sessionId = randomToken();
      const opened = TOKEN.test(token) ? await inRequestTransaction(deps.pool, async (c) => {
        const { rows } = await c.query('select * from app_hidden.dashboard_redeem_link($1, $2)', [sha256(token), sha256(sessionId)]);
        const { rows: [life] } = await c.query('select app_hidden.dashboard_lifetimes() as l');
        return rows[0] ? { returnTo: rows[0].return_to as string | null, hours: life.l.session_hours as number } : null;
      }) : null;
      if (!opened) {
        return sendPage(res, 400, page('Sign in',
          `<p>This sign-in link was used already or has expired. <a href="${SIGN_IN_PATH}">Ask for a new one</a>.</p>`));
      }
      setSessionCookie(res, deps.config, sessionId, opened.hours);
      res.set('Cache-Control', 'no-store').redirect(303, safeReturnTo(opened.returnTo) ?? HOME_PATH);
    },
  },
  {
    method: 'POST',
    path: '/dashboard/sign-out',
    async handle(req, res, deps) {
      const form = await readForm(req);
      await loadSession(req, deps);
      if (!checkCsrf(req, form, deps)) return refused(req, res, deps);
      await endSession(req, res, deps);
      res.set('Cache-Control', 'no-store').redirect(303, SIGN_IN_PATH);
    },
  },
];
