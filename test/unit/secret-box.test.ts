import { describe, expect, test } from '@jest/globals';
import { ConfigError, decodeSecret, loadConfig } from '../../src/config.js';
import { SecretBox } from '../../src/crypto/secret-box.js';

/** The sealing behind CONNECTOR_SECRET and its rotation (docs/deploy.md, "Rotating CONNECTOR_SECRET"). */

const oldSecret = decodeSecret('a1'.repeat(32))!;
const newSecret = decodeSecret('b2'.repeat(32))!;

describe('SecretBox', () => {
  test('seals with the current secret; opens with the current one, or the previous one while rotating', () => {
    const sealedOld = new SecretBox(oldSecret).seal('whsec_old');
    const rotating = new SecretBox(newSecret, oldSecret);
    expect(rotating.tryOpen(sealedOld)).toEqual({ plain: 'whsec_old', sealedWith: 'previous' });
    const sealedNew = rotating.seal('whsec_new');
    expect(rotating.tryOpen(sealedNew)).toEqual({ plain: 'whsec_new', sealedWith: 'current' });
    // What the rotation writes opens with the new secret alone, and no longer with the old one.
    expect(new SecretBox(newSecret).open(sealedNew)).toBe('whsec_new');
    expect(new SecretBox(oldSecret).tryOpen(sealedNew)).toBeNull();
  });

  test('a text sealed with neither secret, tampered with or malformed is not opened', () => {
    const box = new SecretBox(newSecret, oldSecret);
    const sealed = box.seal('whsec_x');
    const [version, iv, tag, data] = sealed.split('.');
    const flipped = `${data!.slice(0, -2)}${data!.endsWith('AA') ? 'AB' : 'AA'}`;
    for (const text of [
      new SecretBox(decodeSecret('c3'.repeat(32))!).seal('whsec_x'),
      [version, iv, tag, flipped].join('.'),
      'v1.a.b',
      `${sealed}.extra`,
      'plain text',
    ]) {
      expect(box.tryOpen(text)).toBeNull();
      expect(() => box.open(text)).toThrow('not a sealed secret, or sealed with another CONNECTOR_SECRET');
    }
  });
});

describe('CONNECTOR_SECRET_PREVIOUS', () => {
  const lines = (env: Record<string, string>) => {
    try {
      loadConfig(env);
      return [];
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      return (err as Error).message.split('\n');
    }
  };

  test('is read like CONNECTOR_SECRET and never echoed back', () => {
    expect(loadConfig({ CONNECTOR_SECRET: 'b2'.repeat(32), CONNECTOR_SECRET_PREVIOUS: 'a1'.repeat(32) }).CONNECTOR_SECRET_PREVIOUS).toBe('a1'.repeat(32));
    expect(lines({ CONNECTOR_SECRET: 'b2'.repeat(32), CONNECTOR_SECRET_PREVIOUS: 'short-secret' })).toEqual([
      'Invalid configuration: CONNECTOR_SECRET_PREVIOUS must be at least 32 bytes, given as hex or base64',
    ]);
  });

  test('needs CONNECTOR_SECRET, the secret being rotated to', () => {
    expect(lines({ CONNECTOR_SECRET_PREVIOUS: 'a1'.repeat(32) })).toEqual([
      'Invalid configuration: CONNECTOR_SECRET must be set when CONNECTOR_SECRET_PREVIOUS is: it is the new secret that stored secrets are re-sealed with',
    ]);
  });
});
