import { describe, expect, test } from '@jest/globals';
import {
  addressPermitted,
  guardedLookup,
  isForbiddenAddress,
  resolveTargetProblem,
  targetPolicy,
  targetUrlProblem,
  type TargetPolicy,
} from '../../src/webhooks/target-guard.js';

// Only pure checks and names answered by /etc/hosts (localhost) or refused before any query
// is sent (a label over 63 characters): these tests never reach a non-loopback address.

const publicOnly = targetPolicy(false);
const anyTarget = targetPolicy(true);
/** What an https delivery may connect to under `policy`. */
const permits = (policy: TargetPolicy) => (address: string) => addressPermitted(policy, address, true);

describe('isForbiddenAddress', () => {
  test.each([
    ['127.0.0.1', 'IPv4 loopback'],
    ['127.255.255.254', 'IPv4 loopback, end of 127/8'],
    ['10.0.0.1', 'private 10/8'],
    ['10.255.255.255', 'private 10/8, last'],
    ['172.16.0.1', 'private 172.16/12, first'],
    ['172.31.255.254', 'private 172.16/12, last'],
    ['192.168.1.1', 'private 192.168/16'],
    ['169.254.169.254', 'link-local (cloud metadata)'],
    ['0.0.0.0', 'unspecified'],
    ['100.64.0.1', 'carrier-grade NAT 100.64/10'],
    ['100.127.255.254', 'carrier-grade NAT, last'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['::1', 'IPv6 loopback'],
    ['::', 'IPv6 unspecified'],
    ['fe80::1', 'IPv6 link-local'],
    ['fe80::1%eth0', 'IPv6 link-local with a zone'],
    ['fc00::1', 'IPv6 unique local fc00::/7'],
    ['fd12::1', 'IPv6 unique local fd00::/8'],
    ['FD12:3456::1', 'IPv6 unique local, upper case'],
    ['ff02::1', 'IPv6 multicast'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback, dotted'],
    ['::ffff:7f00:1', 'IPv4-mapped loopback, hex'],
    ['::ffff:10.0.0.1', 'IPv4-mapped private'],
    ['::ffff:169.254.169.254', 'IPv4-mapped link-local'],
    ['::ffff:0:0', 'IPv4-mapped unspecified'],
    ['0:0:0:0:0:ffff:7f00:0001', 'IPv4-mapped loopback, long form'],
    ['64:ff9b::a00:1', 'NAT64 of 10.0.0.1'],
    ['64:ff9b::7f00:1', 'NAT64 of 127.0.0.1'],
    ['::127.0.0.1', 'IPv4-compatible loopback'],
    ['::a00:1', 'IPv4-compatible private, hex'],
    ['::808:808', 'IPv4-compatible, even of a public address (deprecated, not routed)'],
    ['64:ff9b:1::7f00:1', 'local-use NAT64 64:ff9b:1::/48 (127.0.0.1)'],
    ['64:ff9b:1::808:808', 'local-use NAT64, even of a public address (its translation is local policy)'],
    ['2002:7f00:1::', '6to4 2002::/16 of 127.0.0.1'],
    ['2002:808:808::1', '6to4, even of a public address'],
    ['::ffff:0:7f00:1', 'SIIT ::ffff:0:0:0/96 of 127.0.0.1'],
    ['::ffff:0:808:808', 'SIIT of a public address'],
    ['2001::1', 'Teredo 2001::/32'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'Teredo, a real-looking one'],
    ['2001:db8::1', 'IPv6 documentation'],
    ['3fff::1', 'IPv6 documentation 3fff::/20'],
    ['2001:2::1', 'IPv6 benchmarking'],
    ['100::1', 'IPv6 discard-only'],
    ['fec0::1', 'IPv6 deprecated site-local'],
    ['5f00::1', 'SRv6 segment routing 5f00::/16'],
    ['4000::1', 'IPv6 outside 2000::/3 (not allocated as global unicast)'],
    ['192.0.2.1', 'IPv4 documentation'],
    ['198.18.0.1', 'IPv4 benchmarking'],
    ['240.0.0.1', 'IPv4 reserved'],
    ['127.1', 'IPv4 shorthand (never a DNS answer)'],
    ['not-an-ip', 'anything that is not an address'],
    ['', 'empty'],
  ])('%s is forbidden (%s)', (address) => {
    expect(isForbiddenAddress(address)).toBe(true);
  });

  test.each([
    ['8.8.8.8'],
    ['1.1.1.1'],
    ['172.32.0.1'],
    ['172.15.255.255'],
    ['100.128.0.1'],
    ['11.0.0.1'],
    ['2606:4700::1111'],
    ['2001:4860:4860::8888'],
    ['::ffff:8.8.8.8'],
    ['64:ff9b::808:808'],
    ['2a00:1450:4001:82a::200e'],
  ])('%s is allowed', (address) => {
    expect(isForbiddenAddress(address)).toBe(false);
  });
});

describe('targetUrlProblem', () => {
  test('https to a public address or name passes', () => {
    expect(targetUrlProblem('https://hooks.example.com/in', publicOnly)).toBeNull();
    expect(targetUrlProblem('https://8.8.8.8/in', publicOnly)).toBeNull();
    expect(targetUrlProblem('https://[2606:4700::1111]:8443/in', publicOnly)).toBeNull();
  });

  test('http is refused unless private targets are allowed', () => {
    expect(targetUrlProblem('http://hooks.example.com/in', publicOnly)).toMatch(/https/);
    expect(targetUrlProblem('http://hooks.example.com/in', anyTarget)).toBeNull();
    expect(targetUrlProblem('http://127.0.0.1:8080/in', anyTarget)).toBeNull();
  });

  test('other schemes and non-URLs are refused even when private targets are allowed', () => {
    for (const allow of [publicOnly, anyTarget]) {
      expect(targetUrlProblem('ftp://hooks.example.com/in', allow)).not.toBeNull();
      expect(targetUrlProblem('file:///etc/passwd', allow)).not.toBeNull();
      expect(targetUrlProblem('javascript:alert(1)', allow)).not.toBeNull();
      expect(targetUrlProblem('/relative/path', allow)).toMatch(/absolute URL/);
      expect(targetUrlProblem('', allow)).not.toBeNull();
    }
  });

  test('credentials in the URL are refused', () => {
    expect(targetUrlProblem('https://user:pass@hooks.example.com/in', publicOnly)).toMatch(/credentials/);
    expect(targetUrlProblem('https://user@hooks.example.com/in', publicOnly)).toMatch(/credentials/);
    expect(targetUrlProblem('http://user:pass@127.0.0.1/in', anyTarget)).toMatch(/credentials/);
  });

  test.each([
    'https://127.0.0.1/hook',
    'https://127.0.0.1:8443/hook',
    'https://10.1.2.3/hook',
    'https://192.168.0.10/hook',
    'https://169.254.169.254/latest/meta-data',
    'https://0.0.0.0/hook',
    'https://[::1]/hook',
    'https://[::]/hook',
    'https://[fe80::1]/hook',
    'https://[fd12::1]/hook',
    'https://[::ffff:127.0.0.1]/',
    'https://[::ffff:7f00:1]/',
    'https://[64:ff9b::a00:1]/',
    'https://[64:ff9b:1::7f00:1]/',
    'https://[2002:7f00:1::]/',
    'https://[::ffff:0:7f00:1]/',
    'https://[2001::1]/',
    'https://localhost/hook',
    'https://LOCALHOST/hook',
    'https://foo.localhost/hook',
    // Shorthand and numeric IPv4 forms the URL parser normalises to loopback / unspecified.
    'https://127.1/hook',
    'https://2130706433/hook',
    'https://0x7f000001/hook',
    'https://0/hook',
  ])('%s is refused', (url) => {
    expect(targetUrlProblem(url, publicOnly)).toMatch(/loopback, private or link-local/);
  });

  test('private targets pass when allowed', () => {
    expect(targetUrlProblem('https://127.0.0.1/hook', anyTarget)).toBeNull();
    expect(targetUrlProblem('https://localhost/hook', anyTarget)).toBeNull();
    expect(targetUrlProblem('https://[::1]/hook', anyTarget)).toBeNull();
  });
});

describe('resolveTargetProblem', () => {
  test('a name that resolves to loopback (localhost, via /etc/hosts) is refused', async () => {
    expect(await resolveTargetProblem('https://localhost/hook', publicOnly)).toMatch(/loopback/);
    expect(await resolveTargetProblem('https://localhost:8443/hook', publicOnly)).toMatch(/loopback/);
  });

  test('a name that does not resolve is refused', async () => {
    // A 64-character label cannot be encoded in a DNS query, so the resolver fails locally.
    const host = `${'x'.repeat(64)}.invalid`;
    expect(await resolveTargetProblem(`https://${host}/hook`, publicOnly)).toMatch(/does not resolve/);
  });

  test('IP literals are decided without a lookup', async () => {
    expect(await resolveTargetProblem('https://8.8.8.8/hook', publicOnly)).toBeNull();
    expect(await resolveTargetProblem('https://[2606:4700::1111]/hook', publicOnly)).toBeNull();
    expect(await resolveTargetProblem('https://[::ffff:127.0.0.1]/hook', publicOnly)).toMatch(/loopback/);
  });

  test('the URL checks come first', async () => {
    expect(await resolveTargetProblem('http://8.8.8.8/hook', publicOnly)).toMatch(/https/);
    expect(await resolveTargetProblem('https://u:p@8.8.8.8/hook', publicOnly)).toMatch(/credentials/);
  });

  test('with private targets allowed, loopback names pass', async () => {
    expect(await resolveTargetProblem('http://localhost:1234/hook', anyTarget)).toBeNull();
    expect(await resolveTargetProblem('https://127.0.0.1/hook', anyTarget)).toBeNull();
  });
});

describe('guardedLookup (the delivery-time check inside the socket lookup)', () => {
  const run = (allow: boolean, host: string, all: boolean) =>
    new Promise<{ err: NodeJS.ErrnoException | null; result: unknown }>((resolve) => {
      guardedLookup(permits(allow ? anyTarget : publicOnly))(
        host,
        { all } as never,
        ((err: NodeJS.ErrnoException | null, address: unknown) => resolve({ err, result: address })) as never,
      );
    });

  test('refuses a name that resolves to loopback', async () => {
    const { err } = await run(false, 'localhost', false);
    expect(err).toMatchObject({ code: 'EFORBIDDEN' });
    const both = await run(false, 'localhost', true);
    expect(both.err).toMatchObject({ code: 'EFORBIDDEN' });
  });

  test('passes loopback through when private targets are allowed', async () => {
    const one = await run(true, 'localhost', false);
    expect(one.err).toBeNull();
    expect(['127.0.0.1', '::1']).toContain(one.result);
    const all = await run(true, 'localhost', true);
    expect(all.err).toBeNull();
    expect(Array.isArray(all.result)).toBe(true);
  });
});

describe('guardedLookup refuses whatever a name resolves to, when one address is not global unicast', () => {
  /** A resolver that answers `addresses` for any name, as a rebinding DNS server could. */
  const answering = (addresses: string[]) =>
    ((_host: string, _options: unknown, callback: (err: null, list: Array<{ address: string; family: number }>) => void) =>
      callback(
        null,
        addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })),
      )) as never;
  const run = (addresses: string[]) =>
    new Promise<NodeJS.ErrnoException | null>((resolve) => {
      guardedLookup(permits(publicOnly), answering(addresses))(
        'hooks.example.com',
        { all: true } as never,
        ((err: NodeJS.ErrnoException | null) => resolve(err)) as never,
      );
    });

  test.each([['64:ff9b:1::7f00:1'], ['2002:7f00:1::'], ['::ffff:0:7f00:1'], ['2001::1'], ['127.0.0.1'], ['fd00::1']])('%s', async (address) => {
    expect(await run([address])).toMatchObject({ code: 'EFORBIDDEN' });
    expect(await run(['8.8.8.8', address])).toMatchObject({ code: 'EFORBIDDEN' });
  });

  test('global unicast answers pass', async () => {
    expect(await run(['8.8.8.8', '2606:4700::1111', '64:ff9b::808:808'])).toBeNull();
  });
});
