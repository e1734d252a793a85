// The public form endpoint, outside /api/v1 and with no key (the form's id in the URL names it):
//   GET  /forms/:formId/token        a render-time token for the page's hidden _token field
//   POST /forms/:formId/submissions  a submission, as JSON or application/x-www-form-urlencoded
// Both answer CORS for the form's allowed origins (its sites), with their preflights. Spam is
// stored as spam and answered like an accepted submission (a bot learns nothing); a payload that
// does not fit the fields is a 400 naming them, and stores nothing. A browser's plain HTML post
// (urlencoded, Accept preferring text/html) is answered for a person: a 303 to the form's
// redirect_url, or a thank-you page; its errors as a page with the same status. JSON clients
// keep JSON.
import type { Request, Response } from 'express';
import { readRawBody } from '../http/body.ts';
import { corsForOrigins } from '../http/cors.ts';
import { ApiError, badRequest, toApiError } from '../platform/errors.ts';
import { parseJsonBody } from '../platform/input.ts';
import type { PublicPage } from '../registry/area.ts';
import { HONEYPOT_FIELD, TOKEN_FIELD, formToken, publicForm, submitForm, type PublicForm } from './submit.ts';

const MAX_BODY = 64 * 1024;


/** The submitted fields: a JSON object, or urlencoded pairs (a key given twice is a 400). */
function fieldsOf(req: Request, raw: Buffer): Record<string, unknown> {
  const type = (req.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'application/json') {
    const body = parseJsonBody(raw);
    if (!body || typeof body !== 'object' || Array.isArray(body)) throw badRequest('The body must be a JSON object of field values');
    return body as Record<string, unknown>;
  }
  if (type === 'application/x-www-form-urlencoded') {
    let text: string;
    try {
      text = new TextDecoder('utf-8', { fatal: true }).decode(raw);
    } catch {
      throw badRequest('The request body is not valid UTF-8');
    }
    const out: Record<string, unknown> = {};
    for (const [k, v] of new URLSearchParams(text)) {
      if (Object.hasOwn(out, k)) throw badRequest(`body.${k.slice(0, 100)}: given twice`);
      Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  throw new ApiError(415, 'unsupported_media_type', 'Send the form as application/json or application/x-www-form-urlencoded');
}

/** CORS for the form's sites. */
const cors = (req: Request, res: Response, form: PublicForm | undefined) => corsForOrigins(req, res, form?.allowed_origins, 'Content-Type');

/** A browser's own post: urlencoded, and HTML preferred to JSON (curl and fetch default to JSON). */
function wantsHtml(req: Request): boolean {
  const type = (req.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  return type === 'application/x-www-form-urlencoded' && req.accepts(['application/json', 'text/html']) === 'text/html';
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A small page for a person: a title and a few lines, nothing loaded from elsewhere. */
function page(res: Response, status: number, title: string, lines: string[]): void {
  res.status(status).set({ 'Cache-Control': 'no-store', 'Content-Security-Policy': "default-src 'none'; style-src 'unsafe-inline'",
    'X-Content-Type-Options': 'nosniff' }).type('html').send(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;line-height:1.5}</style></head>
<body><h1>${escapeHtml(title)}</h1>
${lines.map((l) => `<p>${escapeHtml(l)}</p>`).join('\n')}
</body></html>
`);
}

/** A refusal as a page: the status and what to fix (each field of a 400). */
function errorPage(res: Response, err: ApiError): void {
  const issues = (err.extra?.issues as { path: string; message: string }[] | undefined) ?? [];
  const title = err.statusCode === 404 ? 'Form not found' : err.statusCode === 400 ? 'Please check the form' : 'Your message was not sent';
  const lines = issues.length ? issues.map((i) => `${i.path.replace(/^body\./, '')}: ${i.message}`) : [err.message];
  page(res, err.statusCode, title, [...lines, 'Go back to correct it and send it again.']);
}

const formOf = async (req: Request, pool: Parameters<PublicPage['handle']>[2]['pool']) => publicForm(pool, String(req.params.formId));

const preflight = (path: string): PublicPage => ({
  method: 'OPTIONS',
  path,
  async handle(req, res, { pool }) {
    cors(req, res, await formOf(req, pool).catch(() => undefined));
    res.status(204).end();
  },
});

export const formPages: PublicPage[] = [
  preflight('/forms/:formId/token'),
  preflight('/forms/:formId/submissions'),
  {
    method: 'GET',
    path: '/forms/:formId/token',
    async handle(req, res, { pool }) {
      const form = await formOf(req, pool);
      cors(req, res, form);
      res.set('Cache-Control', 'no-store').json({ token: await formToken(pool, form.id), token_field: TOKEN_FIELD,
        honeypot_field: HONEYPOT_FIELD, fields: form.fields });
    },
  },
  {
    method: 'POST',
    path: '/forms/:formId/submissions',
    async handle(req, res, { pool }) {
      const html = wantsHtml(req);
      try {
        const form = await formOf(req, pool);
        cors(req, res, form);
        const fields = fieldsOf(req, await readRawBody(req, MAX_BODY, 'A form submission'));
        const done = await submitForm(pool, form, fields, { clientAddress: req.ip ?? req.socket.remoteAddress ?? undefined });
        // spam is answered exactly like an accepted submission, in either form
        if (!html) {
          res.status(201).set('Cache-Control', 'no-store').json({ id: done.submission_id, received: true });
        } else if (form.redirect_url) {
          res.status(303).set('Cache-Control', 'no-store').location(form.redirect_url).end();
        } else {
          page(res, 200, 'Thank you', [`We received your message through “${form.name}” and will get back to you soon.`]);
        }
      } catch (e) {
        if (!html) throw e;
        const err = toApiError(e);
        if (err.statusCode >= 500) throw e;
        errorPage(res, err);
      }
    },
  },
];
