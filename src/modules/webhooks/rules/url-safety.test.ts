import assert from 'node:assert/strict';
import { BlockList } from 'node:net';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  addressAllowed,
  checkEndpointUrl,
  classifyAddress,
  parseIpv6,
  STRICT_URL_POLICY,
  urlPolicyFor,
  type AddressCategory,
} from './url-safety.ts';

const LOCAL = urlPolicyFor('sandbox', true);

test('addresses are classified by their ranges, IPv4 and IPv6', () => {
  const cases: Array<[string, AddressCategory]> = [
    ['8.8.8.8', 'public'],
    ['1.1.1.1', 'public'],
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['10.0.0.1', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['172.32.0.1', 'public'],
    ['192.168.1.1', 'private'],
    ['100.64.0.1', 'private'],
    ['100.128.0.1', 'public'],
    ['169.254.169.254', 'link-local'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'reserved'],
    ['192.0.2.10', 'reserved'],
    ['198.18.0.1', 'reserved'],
    ['::', 'unspecified'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['fe80::1%eth0', 'link-local'],
    ['fd00::1', 'private'],
    ['fc12:3456::1', 'private'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'reserved'],
    ['2606:4700:4700::1111', 'public'],
    ['2a00:1450:4009:81f::200e', 'public'],
    // IPv4-mapped and -translated forms reach the IPv4 address they embed.
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:10.1.2.3', 'private'],
    ['::ffff:169.254.169.254', 'link-local'],
    ['::ffff:8.8.8.8', 'public'],
    ['0:0:0:0:0:ffff:c0a8:0101', 'private'],
    ['64:ff9b::a9fe:a9fe', 'link-local'],
    ['2002:7f00:1::', 'loopback'],
    ['::127.0.0.1', 'reserved'],
  ];
  for (const [address, expected] of cases) assert.equal(classifyAddress(address), expected, address);
});

test('non-addresses are not classified', () => {
  for (const text of [
    'example.com',
    '1.2.3',
    '1.2.3.4.5',
    '256.1.1.1',
    '01.2.3.4',
    ':::',
    '1::2::3',
    'g::1',
    '',
  ])
    assert.equal(classifyAddress(text), undefined, text);
});

test('IPv6 parsing agrees with node’s own parser on random addresses', () => {
  const group = fc.integer({ min: 0, max: 0xffff });
  fc.assert(
    fc.property(fc.array(group, { minLength: 8, maxLength: 8 }), (groups) => {
      const full = groups.map((g) => g.toString(16)).join(':');
      // The URL parser writes the canonical, compressed form.
      const compressed = new URL(`http://[${full}]/`).hostname;
      assert.deepEqual(parseIpv6(full), groups);
      assert.deepEqual(parseIpv6(compressed), groups);
    }),
  );
});

test('an IPv4 address and its IPv4-mapped IPv6 forms are classified alike, and match node’s BlockList', () => {
  const privateRanges = new BlockList();
  privateRanges.addSubnet('10.0.0.0', 8);
  privateRanges.addSubnet('172.16.0.0', 12);
  privateRanges.addSubnet('192.168.0.0', 16);
  privateRanges.addSubnet('100.64.0.0', 10);
  const octet = fc.integer({ min: 0, max: 255 });
  fc.assert(
    fc.property(fc.tuple(octet, octet, octet, octet), (octets) => {
      const v4 = octets.join('.');
      const category = classifyAddress(v4);
      assert.equal(classifyAddress(`::ffff:${v4}`), category);
      assert.equal(classifyAddress(new URL(`http://[::ffff:${v4}]/`).hostname), category);
      assert.equal(category === 'private', privateRanges.check(v4, 'ipv4'), v4);
    }),
    { numRuns: 2000 },
  );
});

test('only public addresses pass the strict policy; link-local never passes', () => {
  assert.equal(addressAllowed('public', STRICT_URL_POLICY), true);
  for (const category of [
    'loopback',
    'private',
    'link-local',
    'unspecified',
    'multicast',
    'reserved',
  ] as const)
    assert.equal(addressAllowed(category, STRICT_URL_POLICY), false, category);
  assert.equal(addressAllowed('loopback', LOCAL), true);
  assert.equal(addressAllowed('private', LOCAL), true);
  assert.equal(addressAllowed('link-local', LOCAL), false, 'cloud metadata stays out of reach');
});

test('production is always strict; sandbox is local unless the operator turns it off', () => {
  assert.deepEqual(urlPolicyFor('production', true), STRICT_URL_POLICY);
  assert.deepEqual(urlPolicyFor('sandbox', false), STRICT_URL_POLICY);
  assert.deepEqual(urlPolicyFor('sandbox', true), { requireHttps: false, allowPrivate: true });
});

test('endpoint URLs: scheme, credentials and literal hosts are checked before any lookup', () => {
  const refused: Array<[string, RegExp]> = [
    ['http://hooks.example.com/x', /https/],
    ['ftp://hooks.example.com/x', /https URL/],
    ['not a url', /valid absolute URL/],
    ['/relative', /valid absolute URL/],
    ['https://user:pw@hooks.example.com/', /credentials/],
    ['https://127.0.0.1/hook', /loopback/],
    ['https://localhost:8443/hook', /loopback/],
    ['https://api.localhost/hook', /loopback/],
    ['https://10.1.2.3/hook', /private/],
    ['https://[::1]/hook', /loopback/],
    ['https://[::ffff:127.0.0.1]/hook', /loopback/],
    ['https://[::ffff:a9fe:a9fe]/hook', /link-local/],
    ['https://169.254.169.254/latest/meta-data', /link-local/],
    // Shorthand IPv4 is normalised by the URL parser before it is classified.
    ['https://0x7f.1/hook', /loopback/],
    ['https://2130706433/hook', /loopback/],
    ['https://0/hook', /unspecified/],
    [`https://hooks.example.com/${'a'.repeat(2100)}`, /at most 2048/],
    ['https://hooks.example.com:0/hook', /port 0/],
  ];
  for (const [url, reason] of refused) {
    const check = checkEndpointUrl(url, STRICT_URL_POLICY);
    assert.ok(!check.ok, url);
    assert.match(check.reason, reason, url);
  }
  for (const url of ['https://hooks.example.com/milepost', 'https://8.8.8.8/x', 'https://[2606:4700::1]/x'])
    assert.equal(checkEndpointUrl(url, STRICT_URL_POLICY).ok, true, url);
  for (const url of ['http://localhost:3000/hook', 'http://127.0.0.1:9000/', 'http://192.168.0.10/x'])
    assert.equal(checkEndpointUrl(url, LOCAL).ok, true, url);
  assert.equal(checkEndpointUrl('http://169.254.169.254/', LOCAL).ok, false);
});
