// The dashboard's one stylesheet: Pico CSS's classless build (docs/dependencies.md), served from
// the installed package under a fixed path. Its link names the package's version, so a new
// version is a new URL and browsers may keep this one a year without asking again.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { PublicPage } from '../registry/area.ts';

const require = createRequire(import.meta.url);
const PICO = '@picocss/pico/css/pico.classless.min.css';
const css = readFileSync(require.resolve(PICO));
const version = (require('@picocss/pico/package.json') as { version: string }).version;

/** Where the stylesheet is served. */
export const STYLESHEET_PATH = '/dashboard/assets/pico.css';
/** What the pages link: the path with the package's version (a new version, a new URL). */
export const STYLESHEET_HREF = `${STYLESHEET_PATH}?v=${version}`;

export const assetPages: PublicPage[] = [{
  method: 'GET',
  path: STYLESHEET_PATH,
  async handle(_req, res) {
    res.status(200).set({
      'Content-Type': 'text/css; charset=utf-8',
      'Cache-Control': 'public, max-age=31536000, immutable',
      'X-Content-Type-Options': 'nosniff',
    }).send(css);
  },
}];
