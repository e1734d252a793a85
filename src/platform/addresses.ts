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
// (64:ff9b:1::/48 is NAT64 for a local network's own use)
for (const [net, bits] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['64:ff9b:1::', 48]] as const) {
  PRIVATE.addSubnet(net, bits, 'ipv6');
}

/** The 16 bytes of an IPv6 address (isIP said it is one). */
function ipv6Bytes(address: string): number[] {
  let text = address.toLowerCase().split('%')[0]!;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) text = `${text.slice(0, -dotted[1]!.length)}0:0`;
  const [head, tail] = text.split('::') as [string, string | undefined];
  const before = head ? head.split(':') : [];
  const after = tail ? tail.split(':') : [];
  const groups = tail === undefined ? before : [...before, ...Array<string>(8 - before.length - after.length).fill('0'), ...after];
  const bytes = groups.flatMap((g) => { const n = parseInt(g, 16); return [n >> 8, n & 255]; });
  if (dotted) bytes.splice(12, 4, ...dotted[1]!.split('.').map(Number));
  return bytes;
}

/**
 * The IPv4 address an IPv6 one carries, where it leads to that IPv4 host: mapped (::ffff:a.b.c.d),
 * translated (::ffff:0:a.b.c.d), compatible (::a.b.c.d), NAT64 (64:ff9b::/96) and 6to4 (2002::/16).
 */
function embeddedIpv4(address: string): string | null {
  const b = ipv6Bytes(address);
  const zero = (from: number, to: number) => b.slice(from, to).every((x) => x === 0);
  const v4 = (at: number) => b.slice(at, at + 4).join('.');
  if (zero(0, 10) && b[10] === 0xff && b[11] === 0xff) return v4(12);
  if (zero(0, 8) && b[8] === 0xff && b[9] === 0xff && zero(10, 12)) return v4(12);
  if (zero(0, 12) && !zero(12, 16)) return v4(12);
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zero(4, 12)) return v4(12);
  if (b[0] === 0x20 && b[1] === 0x02) return v4(2);
  return null;
}

/** Whether an address is loopback, private, link-local, shared, multicast or unspecified (an IPv4 one inside IPv6 included). */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return PRIVATE.check(address, 'ipv4');
  if (family !== 6) return true;
  const inner = embeddedIpv4(address);
  return inner !== null ? PRIVATE.check(inner, 'ipv4') : PRIVATE.check(address, 'ipv6');
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
