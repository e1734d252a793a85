// The address filter (src/platform/addresses.ts) that outbound webhooks and OAuth client
// metadata fetches go through: one address of every special-purpose range of IANA's IPv4 and
// IPv6 registries is refused, an IPv4 host behind an IPv6 address is judged as that host, and
// globally reachable unicast passes.
import test from 'ava';
import { AddressRefused, checkedAddresses, isPrivateAddress } from '../../src/platform/addresses.ts';

const special: [string, string][] = [
  ['0.0.0.1', 'this network 0.0.0.0/8'], ['10.1.2.3', 'private 10/8'], ['100.64.0.1', 'shared 100.64/10'],
  ['127.0.0.2', 'loopback'], ['169.254.169.254', 'link-local (cloud metadata)'], ['172.16.0.1', 'private 172.16/12'],
  ['192.0.0.9', 'IETF protocol assignments 192.0.0/24'], ['192.0.2.1', 'TEST-NET-1'], ['192.88.99.1', '6to4 relay anycast'],
  ['192.168.1.1', 'private 192.168/16'], ['198.18.0.1', 'benchmarking 198.18/15'], ['198.51.100.1', 'TEST-NET-2'],
  ['203.0.113.1', 'TEST-NET-3'], ['224.0.0.1', 'multicast'], ['240.0.0.1', 'reserved 240/4'], ['255.255.255.255', 'broadcast'],
  ['::', 'unspecified'], ['::1', 'loopback'], ['::ffff:10.0.0.1', 'IPv4-mapped private'], ['::ffff:0:7f00:1', 'IPv4-translated loopback'],
  ['64:ff9b::7f00:1', 'NAT64 to loopback'], ['64:ff9b:1::1', 'local-use NAT64 64:ff9b:1::/48'], ['100::1', 'discard-only 100::/64'],
  ['2001::1', 'Teredo 2001::/32'], ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo, a real client'],
  ['2001:2::1', 'benchmarking 2001:2::/48'], ['2001:10::1', 'ORCHID (deprecated) 2001:10::/28'], ['2001:db8::1', 'documentation'],
  ['2002:c0a8:101::', '6to4 of a private IPv4'], ['3fff::1', 'documentation 3fff::/20'], ['5f00::1', 'segment routing 5f00::/16'],
  ['fc00::1', 'unique local fc00::/7'], ['fd12:3456::1', 'unique local fd00::/8'], ['fe80::1', 'link-local'], ['fe80::1%eth0', 'link-local, zoned'],
  ['fec0::1', 'site-local fec0::/10 (deprecated)'], ['feff::1', 'site-local, its end'], ['ff02::1', 'multicast'],
  ['not-an-address', 'not an address'],
];

for (const [address, range] of special) {
  test(`refused: ${range} (${address})`, async (t) => {
    t.true(isPrivateAddress(address), address);
    if (address === 'not-an-address') return;
    const host = address.includes(':') ? `[${address.split('%')[0]}]` : address;
    const err = await t.throwsAsync(checkedAddresses(new URL(`https://${host}/hook`), false));
    t.true(err instanceof AddressRefused);
    t.regex(err!.message, /private address/);
    t.is((await checkedAddresses(new URL(`https://${host}/hook`), true)).length, 1, 'allowed by the setting');
  });
}

test('globally reachable unicast passes, an IPv4 host inside IPv6 as that host', (t) => {
  for (const a of ['93.184.216.34', '8.8.8.8', '2606:2800:220:1:248:1893:25c8:1946', '2a00:1450:4001::1', '64:ff9b::5db8:d822',
    '::ffff:93.184.216.34', '2002:5db8:d822::1', '1.1.1.1']) {
    t.false(isPrivateAddress(a), a);
  }
});
