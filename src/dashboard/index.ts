// The dashboard: server-rendered pages under /dashboard where people sign in (by email link),
// create and revoke keys, manage their team and organization (docs/dashboard.md). No operations
// of the API: every page action is a SQL function that checks the signed-in person's claims.
import type { Area } from '../registry/area.ts';
import { assetPages } from './assets.ts';
import { page, sendPage } from './html.ts';
import { csrfToken, HOME_PATH, signedIn } from './session.ts';
import { keysPages } from './keys.ts';
import { signInPages } from './sign-in.ts';
import { teamPages } from './team.ts';

export const dashboard: Area = {
  name: 'dashboard',
  operations: [],
  pages: [
    ...assetPages,
    ...signInPages,
    ...keysPages,
    ...teamPages,
    {
      method: 'GET',
      path: HOME_PATH,
      async handle(req, res, deps) {
        const person = await signedIn(req, res, deps);
        if (!person) return;
        sendPage(res, 200, page('Dashboard', '<p>Choose a page above.</p>', { person, csrf: csrfToken(req, res, deps) }));
      },
    },
  ],
};
