import { describe, expect, test } from '@jest/globals';
import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { generateSecret, sign, signedHeaders, verify } from '../../src/webhooks/signing.js';

/** An independent Standard Webhooks signer: HMAC-SHA256 over `{id}.{ts}.{body}` with the secret's bytes. */
function referenceSign(secret: string, id: string, ts: number, body: string): string {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${ts}.${body}`).digest('base64')}`;
}

// A fixed 32-byte secret (bytes 0..31), as the connector issues them.
const secret = 'whsec_AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=';
const id = 'msg_abc_123';
const ts = 1780315470;
const body = '{"type":"device.offline","timestamp":"2026-06-01T12:04:30.123456Z","data":{"id":"evt_1"}}';
// Pinned: computed once; a change to the signed content or encoding breaks this.
const pinned = 'v1,Kd45b8IyDlUUh5ofhM9xz5+K2+2iJs1Zcvw4E/n6uPE=';

describe('known-answer vectors', () => {
  test('the Standard Webhooks specification example signs to its published signature', () => {
    const specSecret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
    const signature = sign(specSecret, 'msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}');
    expect(signature).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  test('our signature equals an independent node:crypto computation and the pinned literal', () => {
    expect(sign(secret, id, ts, body)).toBe(referenceSign(secret, id, ts, body));
    expect(sign(secret, id, ts, body)).toBe(pinned);
  });

  test('the standardwebhooks package signs the same vector identically', () => {
    expect(new Webhook(secret).sign(id, new Date(ts * 1000), body)).toBe(pinned);
  });

  test('signedHeaders carries id, timestamp (seconds, as text) and the signature', () => {
    expect(signedHeaders(secret, id, ts, body)).toEqual({
      'webhook-id': id,
      'webhook-timestamp': String(ts),
      'webhook-signature': pinned,
    });
  });

  test('the body is signed byte for byte (non-ASCII text included)', () => {
    const text = '{"name":"Café window ☕"}';
    expect(sign(secret, id, ts, text)).toBe(referenceSign(secret, id, ts, text));
    expect(sign(secret, id, ts, text)).not.toBe(sign(secret, id, ts, text.normalize('NFD')));
  });
});

describe('generateSecret', () => {
  test('is whsec_ + base64 of 32 random bytes, fresh each time', () => {
    const a = generateSecret();
    const b = generateSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(a.slice(6), 'base64')).toHaveLength(32);
    expect(a).not.toBe(b);
  });
});

describe('interoperability with the standardwebhooks package', () => {
  test('Webhook.verify accepts our headers with a current timestamp (its real clock check)', () => {
    const fresh = generateSecret();
    const now = Math.floor(Date.now() / 1000);
    const headers = signedHeaders(fresh, 'msg_live_1', now, body);
    expect(new Webhook(fresh).verify(body, { ...headers })).toEqual(JSON.parse(body));
  });

  test('Webhook.verify rejects our headers under another secret or with a changed body', () => {
    const fresh = generateSecret();
    const now = Math.floor(Date.now() / 1000);
    const headers = { ...signedHeaders(fresh, 'msg_live_2', now, body) };
    expect(() => new Webhook(generateSecret()).verify(body, headers)).toThrow();
    expect(() => new Webhook(fresh).verify(body.replace('evt_1', 'evt_2'), headers)).toThrow();
  });

  test('our verify accepts what the package signs', () => {
    const fresh = generateSecret();
    const now = Math.floor(Date.now() / 1000);
    const signature = new Webhook(fresh).sign('msg_pkg', new Date(now * 1000), body);
    expect(verify(fresh, { 'webhook-id': 'msg_pkg', 'webhook-timestamp': String(now), 'webhook-signature': signature }, body, now)).toBe(true);
  });
});

describe('verify', () => {
  const headers = signedHeaders(secret, id, ts, body);

  test('accepts the untouched delivery', () => {
    expect(verify(secret, headers, body, ts)).toBe(true);
  });

  test('rejects a tampered body, id or timestamp', () => {
    expect(verify(secret, headers, body.replace('evt_1', 'evt_2'), ts)).toBe(false);
    expect(verify(secret, headers, `${body} `, ts)).toBe(false);
    expect(verify(secret, { ...headers, 'webhook-id': 'msg_abc_124' }, body, ts)).toBe(false);
    expect(verify(secret, { ...headers, 'webhook-timestamp': String(ts + 1) }, body, ts + 1)).toBe(false);
  });

  test('rejects another secret', () => {
    expect(verify(generateSecret(), headers, body, ts)).toBe(false);
  });

  test('rejects a timestamp outside the tolerance, in either direction', () => {
    expect(verify(secret, headers, body, ts + 300)).toBe(true);
    expect(verify(secret, headers, body, ts + 301)).toBe(false);
    expect(verify(secret, headers, body, ts - 301)).toBe(false);
    expect(verify(secret, headers, body, ts + 1000, 1000)).toBe(true);
  });

  test('rejects a timestamp that is not an integer', () => {
    expect(verify(secret, { ...headers, 'webhook-timestamp': 'abc' }, body, ts)).toBe(false);
    expect(verify(secret, { ...headers, 'webhook-timestamp': `${ts}.5` }, body, ts)).toBe(false);
  });

  test('a space-separated list of signatures passes when any one matches', () => {
    const other = sign(generateSecret(), id, ts, body);
    expect(verify(secret, { ...headers, 'webhook-signature': `${other} ${pinned}` }, body, ts)).toBe(true);
    expect(verify(secret, { ...headers, 'webhook-signature': `${pinned} ${other}` }, body, ts)).toBe(true);
    expect(verify(secret, { ...headers, 'webhook-signature': `${other} v1,AAAA` }, body, ts)).toBe(false);
  });

  test('only the v1 scheme is accepted', () => {
    const mac = pinned.slice(3);
    expect(verify(secret, { ...headers, 'webhook-signature': `v2,${mac}` }, body, ts)).toBe(false);
    expect(verify(secret, { ...headers, 'webhook-signature': mac }, body, ts)).toBe(false);
  });

  test('the standardwebhooks package also accepts a list that contains our signature', () => {
    const fresh = generateSecret();
    const now = Math.floor(Date.now() / 1000);
    const ours = signedHeaders(fresh, 'msg_list', now, body);
    const list = { ...ours, 'webhook-signature': `${sign(generateSecret(), 'msg_list', now, body)} ${ours['webhook-signature']}` };
    expect(() => new Webhook(fresh).verify(body, list)).not.toThrow();
  });
});
