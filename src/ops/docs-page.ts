// The API reference page at /api/v1/docs: Scalar's API reference (its standalone browser
// bundle, served from node_modules) rendering the OpenAPI document of /api/v1/docs-json.
// Nothing comes from another origin: the page's Content-Security-Policy names only this one
// (and the base URL's, where "try it" sends requests, which is this service behind its public
// name), Scalar's default web fonts, "Ask AI" panel and request proxy are turned off, and "try
// it" sends requests from the browser straight to the service with the document's bearer scheme.
import { createRequire } from 'node:module';
import type { RequestHandler } from 'express';

export const DOCS_PATH = '/api/v1/docs';
export const DOCS_SCRIPT_PATH = '/api/v1/docs/scalar.js';

const scriptFile = createRequire(import.meta.url).resolve('@scalar/api-reference/browser/standalone.js');

/**
 * Only this origin (and the base URL's for "try it"); inline styles and data: images and fonts,
 * which the bundle builds itself.
 */
export const docsCsp = (baseUrl: string) => [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  `connect-src 'self' ${new URL(baseUrl).origin}`,
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const configuration = {
  withDefaultFonts: false,
  telemetry: false,
  // the "Ask AI" panel and its document registry live on Scalar's servers
  agent: { disabled: true },
  showDeveloperTools: 'never',
  // the one security scheme of the document, preselected for "try it"
  authentication: { preferredSecurityScheme: 'bearer' },
};

const escapeAttribute = (s: string) => s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

const page = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>API reference</title>
<!-- no icon: without this the browser asks for /favicon.ico, which this service does not serve -->
<link rel="icon" href="data:,">
</head>
<body>
<script id="api-reference" data-url="${DOCS_PATH}-json" data-configuration="${escapeAttribute(JSON.stringify(configuration))}"></script>
<script src="${DOCS_SCRIPT_PATH}"></script>
</body>
</html>
`;

export const docsPage = (baseUrl: string): RequestHandler => {
  const csp = docsCsp(baseUrl);
  return (_req, res) => { res.set('Content-Security-Policy', csp).set('Cache-Control', 'no-cache').type('html').send(page); };
};

export const docsScript: RequestHandler = (_req, res, next) => {
  res.sendFile(scriptFile, { maxAge: '1d', headers: { 'Content-Type': 'text/javascript; charset=utf-8' } }, (err) => { if (err) next(err); });
};
