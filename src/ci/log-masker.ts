/**
 * Secret masking for build logs: every occurrence of a secret value — and of its base64,
 * base64url and URL-encoded forms — is replaced by `******` before a line reaches the log sink,
 * including when the value arrives split across output chunks (bytes are assembled into lines
 * first; see {@link LineAssembler}).
 */
import { StringDecoder } from 'node:string_decoder';

/** The replacement text for a secret value. */
export const SECRET_MASK = '******';

/** Longest line kept in memory before it is emitted in pieces (characters). */
const MAX_LINE = 64 * 1024;

/** Shortest encoded form masked: shorter fragments would mask unrelated text. */
const MIN_ENCODED = 6;

/**
 * The base64 forms of a secret as it appears inside any base64 text: for each of the three
 * alignments of its bytes in the encoded stream, the characters that depend on the secret's
 * bytes only (the partial characters at both ends are left out), in base64 and base64url.
 */
function base64Forms(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  const forms: string[] = [bytes.toString('base64')];
  for (let k = 0; k < 3; k++) {
    const encoded = Buffer.concat([Buffer.alloc(k), bytes]).toString('base64');
    const start = Math.ceil((k * 8) / 6);
    const end = Math.floor(((k + bytes.length) * 8) / 6);
    if (end - start >= MIN_ENCODED) forms.push(encoded.slice(start, end));
  }
  return forms.flatMap((f) => [f, f.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '')]);
}

/** The URL-encoded forms of a secret (path/query component, and form encoding with `+` for spaces). */
function urlForms(secret: string): string[] {
  return [encodeURIComponent(secret), new URLSearchParams({ s: secret }).toString().slice(2)];
}

/** Replaces secret values in text. */
export class SecretMasker {
  private readonly secrets: string[];

  /**
   * @param secrets secret values; empty ones are ignored. A multi-line secret is also masked
   *   line by line (each non-blank line of it), because logs are processed per line. Each value
   *   is also masked in its base64 (any alignment), base64url and URL-encoded forms.
   */
  constructor(secrets: readonly string[]) {
    const all = new Set<string>();
    for (const s of secrets) {
      if (!s) continue;
      all.add(s);
      if (/[\r\n]/.test(s)) for (const line of s.split(/\r?\n/)) if (line.trim()) all.add(line);
      for (const form of [...base64Forms(s), ...urlForms(s)]) if (form.length >= MIN_ENCODED || form === s) all.add(form);
    }
    // Longest first, so a secret containing another is masked whole.
    this.secrets = [...all].sort((a, b) => b.length - a.length);
  }

  /** Length of the longest secret (0 when none). */
  get maxLength(): number {
    return this.secrets[0]?.length ?? 0;
  }

  /** Returns `text` with every secret occurrence replaced by `******`. */
  mask(text: string): string {
    let out = text;
    for (const s of this.secrets) if (out.includes(s)) out = out.split(s).join(SECRET_MASK);
    return out;
  }
}

/**
 * Turns a byte stream into masked lines. Bytes are decoded as UTF-8 (multi-byte characters
 * split across chunks are kept intact), split on `\n` (a trailing `\r` is dropped), masked and
 * passed to `emit`. A line longer than 64 KiB is emitted in pieces, cutting only where no
 * secret can straddle the cut.
 */
export class LineAssembler {
  private readonly decoder = new StringDecoder('utf8');
  private buffer = '';

  constructor(
    private readonly masker: SecretMasker,
    private readonly emit: (line: string, raw: string) => void,
  ) {}

  /** Feeds a chunk of output. */
  write(chunk: Buffer | string): void {
    this.buffer += typeof chunk === 'string' ? chunk : this.decoder.write(chunk);
    let nl: number;
    while ((nl = this.buffer.indexOf('\n')) >= 0) {
      const raw = this.buffer.slice(0, nl).replace(/\r$/, '');
      this.buffer = this.buffer.slice(nl + 1);
      this.emit(this.masker.mask(raw), raw);
    }
    if (this.buffer.length > MAX_LINE) {
      // Mask what we have; an occurrence still incomplete must start within the last
      // (maxLength - 1) characters, so everything before that is safe to emit.
      const masked = this.masker.mask(this.buffer);
      const keep = Math.max(this.masker.maxLength - 1, 0);
      const cut = masked.length - keep;
      if (cut > 0) {
        this.emit(masked.slice(0, cut), masked.slice(0, cut));
        this.buffer = masked.slice(cut);
      }
    }
  }

  /** Flushes the last, unterminated line (if any). */
  end(): void {
    this.buffer += this.decoder.end();
    if (this.buffer.length > 0) {
      const raw = this.buffer.replace(/\r$/, '');
      this.buffer = '';
      this.emit(this.masker.mask(raw), raw);
    }
  }
}
