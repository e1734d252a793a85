// SMS through an HTTP provider (SMS_TRANSPORT=https://…). The spec leaves the provider open, so
// this is the smallest contract a provider's API or a small adapter in front of it can meet:
// POST JSON {from, to, body}; any 2xx means accepted; 429, 5xx or no answer is a failure to retry,
// another 4xx a permanent refusal (transport.ts, httpRefusal).
import { httpRefusal, type Transport } from './transport.ts';

export function httpSmsTransport(setting: string): Transport {
  const url = new URL(setting);
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  // fetch refuses URLs that carry credentials: they travel as Basic auth instead.
  if (url.username || url.password) {
    const user = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
    headers.authorization = `Basic ${Buffer.from(user).toString('base64')}`;
    url.username = '';
    url.password = '';
  }
  const endpoint = url.toString();
  return {
    name: 'sms-http',
    async send(m) {
      const res = await fetch(endpoint, {
        method: 'POST',
        // Idempotency-Key: a provider that honours it drops the duplicate a retry may send.
        headers: { ...headers, 'idempotency-key': m.id },
        body: JSON.stringify({ from: m.sender, to: m.recipient, body: m.body }),
        // Bounds how long a delivery can hold up a graceful shutdown.
        signal: AbortSignal.timeout(15_000),
      });
      const text = await res.text();
      if (!res.ok) throw httpRefusal('SMS provider', res.status, text);
    },
  };
}
