// CORS for a public page that a few sites may call from a browser (a form's or a chat widget's
// allowed_origins): the request's Origin echoed when it is one of them, with Vary: Origin always,
// on answers and preflights alike. Any other origin gets no CORS header: the browser keeps the
// answer from the page.
import type { Request, Response } from 'express';

export function corsForOrigins(req: Request, res: Response, allowed: readonly string[] | undefined, headers: string): void {
  res.vary('Origin');
  const origin = req.get('origin');
  if (origin && allowed?.includes(origin)) {
    res.set({ 'Access-Control-Allow-Origin': origin, 'Access-Control-Allow-Methods': 'GET, POST',
      'Access-Control-Allow-Headers': headers, 'Access-Control-Max-Age': '600' });
  }
}
