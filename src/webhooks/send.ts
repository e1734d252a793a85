// One attempt of a delivery: POST the signed body to the receiver, at an address checked as
// src/platform/addresses.ts says, without following redirects; the answer's status is all we keep.
import http from 'node:http';
import https from 'node:https';
import { Webhook } from 'standardwebhooks';
import { checkedAddresses, pinnedLookup } from '../platform/addresses.ts';
import { DELIVERY_TIMEOUT_MS } from './events.ts';

export interface Attempt {
  url: string;
  secret: string;
  /** webhook-id: the same on every attempt of a delivery, so receivers can drop a repeat. */
  id: string;
  body: string;
  allowPrivate: boolean;
  at?: Date;
  /** The whole attempt's time limit (DELIVERY_TIMEOUT_MS). */
  timeoutMs?: number;
}

/** The Standard Webhooks headers of one attempt (webhook-timestamp is the attempt's time). */
export function signedHeaders(secret: string, id: string, body: string, at: Date): Record<string, string> {
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(id, at, body),
  };
}

/** Sends one attempt; answers the receiver's HTTP status, or throws (refused address, network, timeout). */
export async function sendAttempt(a: Attempt): Promise<number> {
  const url = new URL(a.url);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && a.allowPrivate)) {
    throw new Error(`${url.protocol} URLs are not delivered to (https only)`);
  }
  const [pinned] = await checkedAddresses(url, a.allowPrivate);
  const request = url.protocol === 'https:' ? https.request : http.request;
  const limit = a.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  return await new Promise<number>((resolve, reject) => {
    // a deadline for the whole attempt: the socket's own timeout is one of idleness, which a
    // receiver sending a byte now and then (in its headers or its body) never reaches, while the
    // delivery's row stays locked and a worker slot taken
    let status: number | undefined;
    const deadline = setTimeout(() => {
      // past it, an answer whose status came counts (its body is cut short); none is a failure
      if (status !== undefined) resolve(status);
      req.destroy(new Error(`no whole answer within ${limit / 1000} s`));
    }, limit);
    const req = request(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': 'svc-webhooks/1',
        ...signedHeaders(a.secret, a.id, a.body, a.at ?? new Date()),
      },
      timeout: limit,
      lookup: pinnedLookup(pinned!),
    }, (res) => {
      // the answer's body means nothing to us: read and dropped, so the socket is freed; the
      // status counts even when the deadline cuts the body short
      status = res.statusCode ?? 0;
      res.resume();
      const answered = () => { clearTimeout(deadline); resolve(status!); };
      res.on('end', answered);
      res.on('error', answered);
      res.on('close', answered);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${limit / 1000} s`)));
    req.on('error', (e) => {
      clearTimeout(deadline);
      if (status !== undefined) resolve(status);
      else reject(e);
    });
    req.end(a.body);
  });
}
