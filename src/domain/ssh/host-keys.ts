/**
 * The SSH server's host keys (docs/security.md#git-over-ssh): an Ed25519 and an RSA key,
 * generated once into `<data dir>/ssh/` (OpenSSH private key files, 0600, with their `.pub`
 * beside them) and read from there at every start, so that clients' `known_hosts` entries stay
 * valid across restarts and upgrades. Several server processes sharing a data dir agree on them:
 * a key is written under a temporary name and linked into place, and the process that loses the
 * race reads the winner's.
 */
import { createPublicKey, randomUUID } from 'node:crypto';
import { link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import ssh2 from 'ssh2';
import type { Config } from '../../config.js';
import { PRIVATE_DIR_MODE, PRIVATE_FILE_MODE } from '../../data-dir.js';
import { sshKeyFingerprint } from '../users/index.js';

/** Name of the directory of the host keys inside the data dir. */
export const SSH_DIR = 'ssh';

/** What anybody may know of a host key: its type, size, public key line and fingerprint. */
export interface HostKeyInfo {
  /** The key type as OpenSSH names it (`ssh-ed25519`, `ssh-rsa`). */
  type: string;
  /** The label `ssh-keygen -l` prints in parentheses (`ED25519`, `RSA`). */
  label: string;
  /** Key size in bits (256 for Ed25519). */
  bits: number;
  /** `<type> <base64>`: a `known_hosts` entry without its host part. */
  publicKey: string;
  /** `SHA256:<base64>` as `ssh-keygen -l` prints it. */
  fingerprint: string;
}

/** A host key with its private part (OpenSSH format), for the SSH server only. */
export interface HostKey extends HostKeyInfo {
  privateKey: string;
}

/** The host keys of each data dir, read (or made) once per process. */
const loaded = new Map<string, Promise<HostKey[]>>();

const KINDS = [
  { file: 'ssh_host_ed25519_key', label: 'ED25519', generate: () => ssh2.utils.generateKeyPairSync('ed25519') },
  {
    file: 'ssh_host_rsa_key',
    label: 'RSA',
    generate: () =>
      new Promise<{ private: string; public: string }>((resolve, reject) =>
        ssh2.utils.generateKeyPair('rsa', { bits: 3072 }, (error, keys) => (error ? reject(error) : resolve(keys))),
      ),
  },
] as const;

/** Writes `text` to `file` unless it exists (then the file keeps what it holds), never half-written. */
async function createOnce(file: string, text: string): Promise<void> {
  const temporary = `${file}.${randomUUID()}.tmp`;
  await writeFile(temporary, text, { mode: PRIVATE_FILE_MODE, flag: 'wx' });
  try {
    await link(temporary, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    await unlink(temporary);
  }
}

/** Reads a host key file, generating it first when it does not exist. */
async function hostKey(dir: string, kind: (typeof KINDS)[number]): Promise<HostKey> {
  const file = path.join(dir, kind.file);
  let text = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw error;
  });
  if (text === null) {
    await createOnce(file, (await kind.generate()).private);
    text = await readFile(file, 'utf8');
  }
  const parsed = ssh2.utils.parseKey(text);
  const key = Array.isArray(parsed) ? parsed[0] : parsed;
  if (key instanceof Error || key.getPrivatePEM() === null) throw new Error(`${file} is not an OpenSSH private key: remove it to have a new one made`);
  const blob = key.getPublicSSH();
  const publicKey = `${key.type} ${blob.toString('base64')}`;
  await writeFile(`${file}.pub`, `${publicKey}\n`, { mode: PRIVATE_FILE_MODE });
  const details = createPublicKey(key.getPublicPEM()).asymmetricKeyDetails;
  const bits = key.type === 'ssh-ed25519' ? 256 : (details?.modulusLength ?? 0);
  return { type: key.type, label: kind.label, bits, publicKey, fingerprint: sshKeyFingerprint(blob), privateKey: text };
}

/**
 * The host keys of the data dir, Ed25519 first, generated on first use (an RSA key takes a
 * fraction of a second); read once per process.
 *
 * @throws Error when a key file exists but does not hold an OpenSSH private key, or the data dir
 *   cannot be written.
 */
export function sshHostKeys(config: Pick<Config, 'dataDir'>): Promise<HostKey[]> {
  const dir = path.join(config.dataDir, SSH_DIR);
  let keys = loaded.get(dir);
  if (!keys) {
    keys = (async () => {
      await mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
      return Promise.all(KINDS.map((kind) => hostKey(dir, kind)));
    })();
    loaded.set(dir, keys);
    keys.catch(() => loaded.delete(dir));
  }
  return keys;
}

/** The public part of a host key. */
export function hostKeyInfo({ type, label, bits, publicKey, fingerprint }: HostKey): HostKeyInfo {
  return { type, label, bits, publicKey, fingerprint };
}
