// The raw body of a request a public page reads itself (a webhook's signature covers its exact
// bytes; a form post may be JSON or urlencoded), at most `max` bytes.
import type { Request } from 'express';
import { ApiError } from '../platform/errors.ts';

/** The body's bytes; 413 `payload_too_large` beyond `max` (`what` names the limit). */
export async function readRawBody(req: Request, max: number, what = 'The request body'): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > max) throw new ApiError(413, 'payload_too_large', `${what} is at most ${max} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}
