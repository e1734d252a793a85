// How a dashboard page runs: a GET renders for the signed-in person; a POST reads the form,
// checks its CSRF token, runs the change in one transaction under the person's claims (the SQL
// function decides whether the person may), and answers with the page again, its outcome shown.
// A refusal from the database (SV403 insufficient_role, SV404, SV422) is the page with the
// refusal's sentence, at the refusal's status; nothing was written.
import type { Request, Response } from 'express';
import type pg from 'pg';
import { log } from '../log.ts';
import { toApiError } from '../platform/errors.ts';
import type { PublicPage } from '../registry/area.ts';
import { page, sendPage } from './html.ts';
import { asSignedIn, checkCsrf, csrfToken, readForm, signedIn, type PageDeps, type SignedIn } from './session.ts';

export interface View {
  req: Request;
  res: Response;
  deps: PageDeps;
  person: SignedIn;
  /** The CSRF token for this page's forms. */
  csrf: string;
  /** Set by a render that finds nothing to show (404): the page's status when no action set one. */
  status?: number;
}

export interface Outcome { status?: number; notice?: string; error?: string; /** Shown above the page (the new key, once). */ extra?: string }

/** A page: its GET renders `render` (in a transaction under the person's claims); its POSTs run actions. */
export function dashboardPage(path: string, title: string,
  render: (c: pg.PoolClient, view: View) => Promise<string>,
  actions: Record<string, (c: pg.PoolClient, form: URLSearchParams, view: View) => Promise<Outcome>> = {}): PublicPage[] {
  async function answer(req: Request, res: Response, deps: PageDeps, person: SignedIn, outcome: Outcome) {
    const view: View = { req, res, deps, person, csrf: csrfToken(req, res, deps) };
    const body = await asSignedIn(deps, req, (c) => render(c, view));
    if (body === null) return void res.redirect(303, '/dashboard/sign-in');
    sendPage(res, outcome.status ?? view.status ?? 200, page(title, (outcome.extra ?? '') + body,
      { person, csrf: view.csrf, notice: outcome.notice, error: outcome.error }));
  }
  const pages: PublicPage[] = [{
    method: 'GET',
    path,
    async handle(req, res, deps) {
      const person = await signedIn(req, res, deps);
      if (person) await answer(req, res, deps, person, {});
    },
  }];
  for (const [name, act] of Object.entries(actions)) {
    pages.push({
      method: 'POST',
      path: `${path}/${name}`,
      async handle(req, res, deps) {
        const form = await readForm(req);
        const person = await signedIn(req, res, deps);
        if (!person) return;
        if (!checkCsrf(req, form, deps)) {
          return answer(req, res, deps, person, { status: 403, error: 'The form was out of date or came from another site: nothing was changed.' });
        }
        const view: View = { req, res, deps, person, csrf: csrfToken(req, res, deps) };
        let outcome: Outcome;
        try {
          outcome = (await asSignedIn(deps, req, (c) => act(c, form, view))) ?? { status: 401, error: 'Sign in again.' };
        } catch (e) {
          if (e instanceof FormError) return answer(req, res, deps, person, { status: 400, error: e.message });
          const err = toApiError(e);
          if (err.statusCode >= 500) {
            log.error({ err: e, requestId: res.locals.requestId }, 'dashboard action failed');
            throw e;
          }
          outcome = { status: err.statusCode, error: err.message };
        }
        // the person may have changed themselves (role, deactivation): read again for the page
        const now = await signedIn(req, res, deps);
        if (now) await answer(req, res, deps, now, outcome);
      },
    });
  }
  return pages;
}

/** A checkbox group's values, each one of `allowed` (others are a 400). */
export function chosen<T extends string>(form: URLSearchParams, name: string, allowed: readonly T[]): T[] {
  const values = form.getAll(name);
  for (const v of values) if (!(allowed as readonly string[]).includes(v)) throw new FormError(`${name}: unknown value`);
  return [...new Set(values)] as T[];
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export function uuids(form: URLSearchParams, name: string): string[] {
  const values = form.getAll(name);
  for (const v of values) if (!UUID.test(v)) throw new FormError(`${name}: not an id`);
  return [...new Set(values)];
}
export function uuid(form: URLSearchParams, name: string): string {
  const v = form.get(name) ?? '';
  if (!UUID.test(v)) throw new FormError(`${name}: not an id`);
  return v;
}
export function oneOf<T extends string>(form: URLSearchParams, name: string, allowed: readonly T[]): T {
  const v = form.get(name) ?? '';
  if (!(allowed as readonly string[]).includes(v)) throw new FormError(`${name}: choose one of ${allowed.join(', ')}`);
  return v as T;
}

/** A form value the page cannot take: 400, nothing written. */
export class FormError extends Error {}
