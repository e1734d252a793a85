// Which addresses the service may connect to on a caller's say-so (an OAuth client's metadata
// document, an integration's webhook URL): only globally reachable unicast ones, never the
// service's own network or any other special-purpose range, unless a setting allows it. The
// special-purpose ranges are IANA's registries for IPv4 and IPv6 (loopback, private, link-local
// with cloud metadata at 169.254.169.254, shared, site-local, unique-local, Teredo, ORCHID,
// benchmarking, documentation, discard, multicast, reserved, …) as the ipaddr.js package keeps
// them (docs/dependencies.md): an address whose range() is not 'unicast' is refused. An IPv6
// address that leads to an IPv4 host (mapped, translated, compatible, NAT64, 6to4) is judged by
// that IPv4 address. A host name is resolved once, every address it resolves to is checked, and
// the connection goes to a checked address (pinnedLookup), never to what a second resolution
// might answer.
import ipaddr from 'ipaddr.js';
import { isIP } from 'node:net';
import { lookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';

/**
 * The IPv4 address an IPv6 one carries, where it leads to that IPv4 host: mapped (::ffff:a.b.c.d),
 * translated (::ffff:0:a.b.c.d), compatible (::a.b.c.d), NAT64 (64:ff9b::/96) and 6to4 (2002::/16).
 */
function embeddedIpv4(v6: ipaddr.IPv6): ipaddr.IPv4 | null {
  const b = v6.toByteArray();
  const zero = (from: number, to: number) => b.slice(from, to).every((x) => x === 0);
  const v4 = (at: number) => new ipaddr.IPv4(b.slice(at, at + 4));
  const range = v6.range();
  if (range === 'ipv4Mapped' || range === 'rfc6145') return v4(12);
  if (v6.match(ipaddr.IPv6.parse('64:ff9b::'), 96)) return v4(12);
  if (range === '6to4') return v4(2);
  if (zero(0, 12) && !zero(12, 16) && !(zero(12, 15) && b[15] === 1)) return v4(12);
  return null;
}

/** Whether an address is anything but globally reachable unicast (an IPv4 one inside IPv6 included); not an address: true. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true;
  const parsed = ipaddr.parse(address.split('%')[0]!);
  if (parsed.kind() === 'ipv6') {
    const inner = embeddedIpv4(parsed as ipaddr.IPv6);
    if (inner) return inner.range() !== 'unicast';
  }
  return parsed.range() !== 'unicast';
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
