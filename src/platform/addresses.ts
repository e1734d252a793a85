// Which addresses the service may connect to on a caller's say-so (an OAuth client's metadata
// document, an integration's webhook URL): never the service's own network — loopback,
// private, link-local (cloud metadata at 169.254.169.254), shared, multicast or unspecified —
// unless a setting allows it. A host name is resolved once, every address it resolves to is
// checked, and the connection goes to a checked address (pinnedLookup), never to what a second
// resolution might answer.
import { BlockList, isIP } from 'node:net';
import { lookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';

const PRIVATE = new BlockList();
for (const [net, bits] of [['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16],
  ['172.16.0.0', 12], ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 3]] as const) {
  PRIVATE.addSubnet(net, bits, 'ipv4');
}
for (const [net, bits] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8]] as const) PRIVATE.addSubnet(net, bits, 'ipv6');

/** Whether an address is loopback, private, link-local, shared, multicast or unspecified. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return PRIVATE.check(address, 'ipv4');
  if (family !== 6) return true;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped ? PRIVATE.check(mapped[1]!, 'ipv4') : PRIVATE.check(address, 'ipv6');
}

export interface ResolvedAddress { address: string; family: number }

/** Why a host may not be connected to: it does not resolve, or resolves (in part) to a private address. */
export class AddressRefused extends Error {
  readonly reason: 'unresolved' | 'private';
  constructor(reason: 'unresolved' | 'private', message: string) {
    super(message);
    this.reason = reason;
  }
}

/**
 * The addresses of a URL's host (an IP literal is its own), every one checked: a private one
 * anywhere among them refuses the host unless `allowPrivate`.
 */
export async function checkedAddresses(url: URL, allowPrivate: boolean): Promise<ResolvedAddress[]> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const addresses = isIP(host) ? [{ address: host, family: isIP(host) }] : await lookup(host, { all: true }).catch(() => []);
  if (addresses.length === 0) throw new AddressRefused('unresolved', `${url.hostname} does not resolve`);
  if (!allowPrivate) {
    const bad = addresses.find((a) => isPrivateAddress(a.address));
    if (bad) throw new AddressRefused('private', `${url.hostname} resolves to a private address (${bad.address})`);
  }
  return addresses;
}

/** An http(s) `lookup` option that answers the address checked, whatever the host name. */
export function pinnedLookup(pinned: ResolvedAddress): LookupFunction {
  return (_host, opts, cb) => ((opts as { all?: boolean }).all
    ? (cb as unknown as (e: null, a: ResolvedAddress[]) => void)(null, [pinned])
    : cb(null, pinned.address, pinned.family));
}
