/**
 * Encryption of job secrets at rest (docs/compatibility.md#gitloom-differs-untrusted-builds, docs/architecture.md#data-layout): AES-256-GCM
 * with a 32-byte key from `GITLOOM_SECRET_KEY`, or generated once into `<data dir>/secret.key`
 * (mode 0600). A stored value reads `v1:<base64 of 12-byte IV ‖ 16-byte tag ‖ ciphertext>`.
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Config } from '../../config.js';

const VERSION = 'v1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** Additional authenticated data: a ciphertext made for something else does not decrypt as a job secret. */
const AAD = Buffer.from('gitloom job secret');

const keys = new Map<string, Buffer>();

/** Path of the generated key file. */
export function secretKeyPath(config: Pick<Config, 'dataDir'>): string {
  return path.join(config.dataDir, 'secret.key');
}

/**
 * The key encrypting job secrets: `config.secretKey` when set, else the 32 bytes of
 * `<data dir>/secret.key`, created (0600, exclusively, so concurrent processes agree) when it
 * does not exist. Cached per data dir.
 *
 * @throws Error when the key file exists but does not hold 32 bytes.
 */
export function secretKey(config: Pick<Config, 'dataDir' | 'secretKey'>): Buffer {
  if (config.secretKey) return config.secretKey;
  const file = secretKeyPath(config);
  const cached = keys.get(file);
  if (cached) return cached;
  try {
    writeFileSync(file, randomBytes(32), { mode: 0o600, flag: 'wx' });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
  const key = readFileSync(file);
  if (key.length !== 32) throw new Error(`${file} must hold 32 bytes, found ${key.length}`);
  keys.set(file, key);
  return key;
}

/** Whether a stored text is an encrypted secret (made by {@link encryptSecret}). */
export function isEncryptedSecret(text: unknown): text is string {
  return typeof text === 'string' && text.startsWith(VERSION);
}

/**
 * Encrypts a secret value: `v1:` + base64(IV ‖ tag ‖ ciphertext), a fresh random IV each time.
 * `purpose` (authenticated, default a job secret's) keeps a value made for one purpose (a
 * registry password of a job executor) from decrypting as another.
 */
export function encryptSecret(key: Buffer, plaintext: string, purpose: Buffer = AAD): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(purpose);
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return VERSION + Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64');
}

/**
 * Decrypts a value made by {@link encryptSecret} for the same `purpose`.
 *
 * @throws Error when the value is malformed or was encrypted with another key (GCM
 *   authentication fails) — a server misconfiguration, never user input.
 */
export function decryptSecret(key: Buffer, stored: string, purpose: Buffer = AAD): string {
  if (!isEncryptedSecret(stored)) throw new Error('Not an encrypted job secret');
  const raw = Buffer.from(stored.slice(VERSION.length), 'base64');
  if (raw.length < IV_BYTES + TAG_BYTES) throw new Error('Encrypted job secret is truncated');
  const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES));
  decipher.setAAD(purpose);
  decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
  try {
    return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8');
  } catch {
    throw new Error('Job secret cannot be decrypted: the secret key (GITLOOM_SECRET_KEY or <data dir>/secret.key) is not the one it was encrypted with');
  }
}
