// SMS through a Twilio-compatible provider: SMS_TRANSPORT=twilio://ACCOUNT_SID:AUTH_TOKEN@HOST
// (HOST api.twilio.com, or any server speaking the same Messages resource; `twilio+http://`
// for a plain-HTTP one such as the tests' fake). A message is a form-encoded POST to
// /2010-04-01/Accounts/{SID}/Messages.json with Basic auth, From/To/Body and StatusCallback
// pointing back at us (SVC_BASE_URL + /webhooks/twilio/status, src/delivery/webhooks.ts); the
// answer's `sid` is kept as the message's provider id, which the status callbacks name.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { httpRefusal, type Transport } from './transport.ts';

export interface TwilioSetting { accountSid: string; authToken: string; apiBase: string }

/** The account, token and API origin of a twilio:// setting; undefined for any other setting. */
export function parseTwilioSetting(setting: string | undefined): TwilioSetting | undefined {
  if (!setting || !URL.canParse(setting)) return undefined;
  const url = new URL(setting);
  if (url.protocol !== 'twilio:' && url.protocol !== 'twilio+http:') return undefined;
  const accountSid = decodeURIComponent(url.username);
  const authToken = decodeURIComponent(url.password);
  if (!accountSid || !authToken || !url.hostname) {
    throw new Error('SMS_TRANSPORT=twilio://ACCOUNT_SID:AUTH_TOKEN@HOST needs the account SID, the auth token and the host');
  }
  const scheme = url.protocol === 'twilio+http:' ? 'http' : 'https';
  return { accountSid, authToken, apiBase: `${scheme}://${url.host}` };
}

/**
 * Twilio's X-Twilio-Signature for a request: base64 of the HMAC-SHA1, under the auth token, of
 * the full URL followed by every POST parameter's name and value, sorted by name.
 */
export function twilioSignature(authToken: string, url: string, params: Record<string, string | string[]>): string {
  let data = url;
  for (const name of Object.keys(params).sort()) {
    const value = params[name]!;
    for (const v of Array.isArray(value) ? [...value].sort() : [value]) data += name + v;
  }
  return createHmac('sha1', authToken).update(data, 'utf8').digest('base64');
}

/** Whether `header` is the signature of this request (constant-time comparison). */
export function twilioSignatureValid(authToken: string, url: string, params: Record<string, string | string[]>,
  header: string | undefined): boolean {
  if (!header) return false;
  const expected = Buffer.from(twilioSignature(authToken, url, params));
  const given = Buffer.from(header.trim());
  return given.length === expected.length && timingSafeEqual(given, expected);
}

export function twilioSmsTransport(setting: TwilioSetting, baseUrl: string | undefined): Transport {
  const endpoint = `${setting.apiBase}/2010-04-01/Accounts/${encodeURIComponent(setting.accountSid)}/Messages.json`;
  const authorization = `Basic ${Buffer.from(`${setting.accountSid}:${setting.authToken}`).toString('base64')}`;
  // under SVC_BASE_URL's path too (a service served at https://host/svc/): the URL the status
  // callbacks come to is the one their signature is checked against (webhooks.ts, signedUrl)
  const statusCallback = baseUrl ? `${baseUrl.replace(/\/+$/, '')}/webhooks/twilio/status` : undefined;
  return {
    name: 'twilio',
    async send(m) {
      const form = new URLSearchParams({ To: m.recipient, Body: m.body });
      if (m.sender) form.set('From', m.sender);
      if (statusCallback) form.set('StatusCallback', statusCallback);
      const res = await fetch(endpoint, {
        method: 'POST',
        headers: { authorization, 'content-type': 'application/x-www-form-urlencoded', 'i-twilio-idempotency-token': m.id },
        body: form.toString(),
        signal: AbortSignal.timeout(15_000),
      });
      const text = await res.text();
      if (!res.ok) throw httpRefusal('Twilio', res.status, text);
      let sid: unknown;
      try { sid = (JSON.parse(text) as { sid?: unknown }).sid; } catch { /* refused below */ }
      if (typeof sid !== 'string' || sid.length === 0 || sid.length > 200) {
        throw new Error(`Twilio accepted the message without a sid: ${text.slice(0, 200)}`);
      }
      return { providerId: sid };
    },
  };
}
