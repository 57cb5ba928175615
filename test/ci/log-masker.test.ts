import { describe, expect, it } from 'vitest';
import { LineAssembler, SecretMasker } from '../../src/ci/log-masker.js';

function assemble(secrets: string[], chunks: (string | Buffer)[]): string[] {
  const lines: string[] = [];
  const a = new LineAssembler(new SecretMasker(secrets), (line) => lines.push(line));
  for (const c of chunks) a.write(typeof c === 'string' ? Buffer.from(c) : c);
  a.end();
  return lines;
}

describe('secret masking', () => {
  it('masks base64 (any alignment, base64url too) and URL-encoded forms of a secret', () => {
    const secret = 'p@ss w/rd+4?ÿ';
    const masker = new SecretMasker([secret]);
    const b64 = (text: string) => Buffer.from(text).toString('base64');
    for (const text of [secret, `${secret}\n`, `user:${secret}`, `ab:${secret}:cd`]) {
      const encoded = b64(text);
      const masked = masker.mask(`Authorization: Basic ${encoded}`);
      expect(masked).toContain('******');
      // no run of 8 characters of the secret's own encoding survives
      expect(masked).not.toContain(b64(secret).slice(2, 10));
    }
    expect(masker.mask(Buffer.from(secret).toString('base64url'))).toBe('******');
    expect(masker.mask(`https://h/?t=${encodeURIComponent(secret)}&x=1`)).toBe('https://h/?t=******&x=1');
    expect(masker.mask(`a=${new URLSearchParams({ s: secret }).toString().slice(2)}`)).toBe('a=******');
    expect(masker.mask('unrelated text stays')).toBe('unrelated text stays');
  });

  it('masks secrets split at every possible chunk boundary', () => {
    const secret = 'p4ss-w0rd';
    const text = `user ${secret} and ${secret}\n`;
    for (let cut = 1; cut < text.length; cut++) {
      expect(assemble([secret], [text.slice(0, cut), text.slice(cut)])).toEqual(['user ****** and ******']);
    }
  });

  it('masks the longest secret first and each line of a multi-line secret', () => {
    expect(new SecretMasker(['abc', 'abcdef']).mask('xabcdefx abc')).toBe('x******x ******');
    expect(assemble(['-----BEGIN KEY-----\nline-two-of-key\n-----END KEY-----'], ['x -----BEGIN KEY-----\nline-two-of-key\n'])).toEqual(['x ******', '******']);
  });

  it('keeps multi-byte characters split across chunks intact and drops CR', () => {
    const bytes = Buffer.from('héllo wörld\r\n');
    expect(assemble([], [bytes.subarray(0, 2), bytes.subarray(2, 9), bytes.subarray(9)])).toEqual(['héllo wörld']);
  });

  it('emits very long lines in pieces without exposing a secret at a cut', () => {
    const secret = 'TOPSECRETVALUE';
    const long = 'x'.repeat(70 * 1024 - 5) + secret + 'y'.repeat(1000) + '\n';
    const lines: string[] = [];
    const a = new LineAssembler(new SecretMasker([secret]), (l) => lines.push(l));
    for (let i = 0; i < long.length; i += 4096) a.write(Buffer.from(long.slice(i, i + 4096)));
    a.end();
    expect(lines.length).toBeGreaterThan(1);
    expect(lines.join('')).not.toContain('TOPSECRET');
    expect(lines.join('')).toContain('******');
    expect(lines.join('').length).toBe(long.length - 1 - secret.length + 6);
  });
});
