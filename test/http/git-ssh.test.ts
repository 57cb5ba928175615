/**
 * Git over SSH with the real OpenSSH client (docs/compatibility.md#git-over-ssh): user keys made
 * by ssh-keygen and added through the API, the server's host keys in a known_hosts file checked
 * strictly, git cloning, fetching and pushing through `GIT_SSH_COMMAND` — with the permissions,
 * branch protection, messages and reactions of git over HTTP. SQLite, or PostgreSQL with
 * GITLOOM_TEST_DATABASE_URL.
 */
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, sshRootUrlOf } from '../../src/config.js';
import { parseSshCommand } from '../../src/ssh/commands.js';
import { signInByFetch } from '../helpers/browser.js';
import { eventually, givenProject, grantRole } from '../helpers/fixtures.js';
import {
  ADMIN,
  commitFiles,
  freePort,
  git,
  GIT_TEST_ENV,
  gitUrl,
  givenInstallation,
  killChild,
  makeWorkTree,
  serveChild,
  startTestServer,
  type TestServer,
} from '../helpers/server.js';

const run = promisify(execFile);
/** The name the known_hosts file gives the server, whatever port it listens on (`HostKeyAlias`). */
const HOST_ALIAS = 'gitloom-test';

let server: TestServer;
let home: string;
let knownHosts: string;
let projectId: number;
const users: Record<'writer' | 'reader' | 'outsider', { id: number; auth: string; name: string; password: string; key: string }> = {} as never;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** A key pair made by ssh-keygen; returns the private key's path. */
async function keygen(name: string, type: 'ed25519' | 'rsa' | 'ecdsa'): Promise<string> {
  const file = path.join(home, name);
  await run('ssh-keygen', ['-q', '-t', type, ...(type === 'rsa' ? ['-b', '3072'] : []), '-N', '', '-C', `${name}@test`, '-f', file]);
  return file;
}

/** The options of every OpenSSH client here: nothing but `keys`, the known_hosts file `hosts` checked strictly, no prompt. */
function sshOptions(keys: string | string[], hosts = knownHosts): string[] {
  return [
    '-F',
    '/dev/null',
    ...[keys].flat().flatMap((key) => ['-i', key]),
    '-o',
    'IdentitiesOnly=yes',
    '-o',
    'BatchMode=yes',
    '-o',
    `UserKnownHostsFile=${hosts}`,
    '-o',
    'StrictHostKeyChecking=yes',
    '-o',
    `HostKeyAlias=${HOST_ALIAS}`,
  ];
}

/** The ssh command line of git for `key`. */
function sshCommand(key: string, ...extra: string[]): string {
  return ['ssh', ...sshOptions(key), ...extra].join(' ');
}

/** Runs a command; never rejects. */
function exec(file: string, args: string[], options: { cwd?: string; env?: Record<string, string>; input?: string } = {}): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(file, args, { cwd: options.cwd ?? home, env: { ...process.env, ...options.env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    // a command that exits before reading its input closes the pipe
    child.stdin.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EPIPE') throw error;
    });
    child.stdin.end(options.input ?? '');
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

/** Runs git in `cwd` with `key` as its SSH identity. */
function gitSsh(cwd: string, key: string, args: string[], env: Record<string, string> = {}): Promise<Run> {
  return exec('git', args, {
    cwd,
    env: { GIT_SSH_COMMAND: sshCommand(key), ...GIT_TEST_ENV, ...env },
  });
}

/** ssh to the server with `key`, running `command` (none: a shell). */
function ssh(key: string, command?: string, port = server.server.ssh!.port): Promise<Run> {
  return exec('ssh', [...sshOptions(key), '-p', String(port), 'git@127.0.0.1', ...(command === undefined ? [] : [command])]);
}

/** The SSH clone URL of a project, as `clone-url` names it. */
async function sshUrl(id = projectId): Promise<string> {
  return (await server.call('GET', `/projects/${id}/clone-url`)).json.ssh;
}

/** A fresh directory under the test's home. */
async function freshDir(name: string): Promise<string> {
  return fs.mkdtemp(path.join(home, `${name}-`));
}

/** Writes the known_hosts file from the host keys the server reports. */
async function trustHostKeys(keys: { publicKey: string }[]): Promise<void> {
  await fs.writeFile(knownHosts, keys.map((key) => `${HOST_ALIAS} ${key.publicKey}\n`).join(''));
}

beforeAll(async () => {
  home = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-ssh-'));
  knownHosts = path.join(home, 'known_hosts');
  server = await startTestServer({ GITLOOM_SSH_MAX_SESSIONS_PER_USER: '2' }, { ssh: true });
  await trustHostKeys(server.server.ssh!.hostKeys);
  projectId = await givenProject(server, { name: 'app' });
  const types = { writer: 'ed25519', reader: 'rsa', outsider: 'ecdsa' } as const;
  for (const name of ['writer', 'reader', 'outsider'] as const) {
    const user = await server.createUser(name);
    const key = await keygen(name, types[name]);
    const added = await server.call('POST', `/users/${user.id}/ssh-keys`, { text: await fs.readFile(`${key}.pub`, 'utf8'), auth: user.auth });
    expect(added.status, added.text).toBe(200);
    users[name] = { ...user, key };
  }
  await grantRole(server, projectId, users.writer.id, 'Code Writer');
  await grantRole(server, projectId, users.reader.id, 'Code Reader');
  const work = await makeWorkTree({ 'README.md': '# app\n' });
  await git(work, ['push', '-q', gitUrl(server, 'app', ADMIN), 'main']);
});

afterAll(async () => {
  await server?.close();
  await fs.rm(home, { recursive: true, force: true });
});

describe('host keys', () => {
  it('are an Ed25519 and an RSA key whose fingerprints are what ssh-keygen prints, shown to administrators', async () => {
    const keys = server.server.ssh!.hostKeys;
    expect(keys.map((key) => [key.type, key.bits])).toEqual([
      ['ssh-ed25519', 256],
      ['ssh-rsa', 3072],
    ]);
    const listed = await exec('ssh-keygen', ['-l', '-f', knownHosts]);
    expect(listed.stdout.trim().split('\n')).toEqual(keys.map((key) => `${key.bits} ${key.fingerprint} ${HOST_ALIAS} (${key.label})`));
    // what the server presents on its port (ssh-keyscan asks for each type)
    const scanned = await exec('ssh-keyscan', ['-p', String(server.server.ssh!.port), '-t', 'ed25519,rsa', '127.0.0.1']);
    expect(scanned.stdout.trim().split('\n').sort()).toEqual(keys.map((key) => `[127.0.0.1]:${server.server.ssh!.port} ${key.publicKey}`).sort());
    for (const file of ['ssh_host_ed25519_key', 'ssh_host_rsa_key']) expect((await fs.stat(path.join(server.dataDir, 'ssh', file))).mode & 0o777).toBe(0o600);

    const admin = await signInByFetch(server, ADMIN.name, ADMIN.password);
    const page = await (await fetch(`${server.url}/~administration/ssh`, { headers: { cookie: admin.cookie } })).text();
    for (const key of keys) expect(page).toContain(`${key.bits} ${key.fingerprint} (${key.label})`);
    expect(page).toContain(`ssh://127.0.0.1:${server.server.ssh!.port}`);
    const writer = await signInByFetch(server, users.writer.name, users.writer.password);
    expect((await fetch(`${server.url}/~administration/ssh`, { headers: { cookie: writer.cookie } })).status).toBe(404);
  });

  it('clone URLs name the SSH port; RSA host keys work for clients that only know that one', async () => {
    expect(await sshUrl()).toBe(`ssh://127.0.0.1:${server.server.ssh!.port}/app`);
    const rsaOnly = path.join(home, 'known_hosts_rsa');
    await fs.writeFile(rsaOnly, `${HOST_ALIAS} ${server.server.ssh!.hostKeys[1].publicKey}\n`);
    const dir = await freshDir('rsa-host');
    const res = await exec('git', ['clone', '-q', await sshUrl(), '.'], {
      cwd: dir,
      env: { GIT_SSH_COMMAND: `${sshCommand(users.reader.key)} -o UserKnownHostsFile=${rsaOnly} -o HostKeyAlgorithms=rsa-sha2-512,rsa-sha2-256` },
    });
    expect(res.code, res.stderr).toBe(0);
  });
});

describe('clone, fetch and push', () => {
  let clone: string;

  it('clones with every key type OneDev accepts, with or without a leading slash and .git', async () => {
    const port = server.server.ssh!.port;
    const urls = [await sshUrl(), `ssh://git@127.0.0.1:${port}/app.git`, `ssh://anyone@127.0.0.1:${port}/app/`];
    for (const [i, who] of (['writer', 'reader', 'writer'] as const).entries()) {
      const dir = await freshDir(`clone-${i}`);
      const res = await gitSsh(dir, users[who].key, ['clone', '-q', urls[i], '.']);
      expect(res.code, res.stderr).toBe(0);
      expect(await fs.readFile(path.join(dir, 'README.md'), 'utf8')).toBe('# app\n');
      clone = dir;
    }
    // scp-like syntax, as `git@host:path` remotes are written (port through the ssh command)
    const scp = await freshDir('scp');
    const res = await exec('git', ['clone', '-q', 'git@127.0.0.1:/app.git', '.'], {
      cwd: scp,
      env: { GIT_SSH_COMMAND: sshCommand(users.writer.key, '-p', String(port)) },
    });
    expect(res.code, res.stderr).toBe(0);
    // the ECDSA key of a user who may not see the project authenticates, and is told nothing exists
    const hidden = await gitSsh(await freshDir('outsider'), users.outsider.key, ['clone', '-q', await sshUrl(), '.']);
    expect(hidden.code).not.toBe(0);
    expect(hidden.stderr).toContain('Gitloom: Project not found: app');
  });

  it('pushes a branch, which lands in the journal and reaches the pull request it updates', async () => {
    await git(clone, ['checkout', '-q', '-b', 'feature']);
    await commitFiles(clone, { 'feature.txt': 'one\n' }, 'feature one');
    const created = await gitSsh(clone, users.writer.key, ['push', '-q', 'origin', 'feature']);
    expect(created.code, created.stderr).toBe(0);
    const pull = await server.call('POST', '/pulls', {
      body: { targetProjectId: projectId, sourceProjectId: projectId, targetBranch: 'main', sourceBranch: 'feature', title: 'Feature' },
      auth: users.writer.auth,
    });
    expect(pull.status, pull.text).toBe(200);
    const head = await commitFiles(clone, { 'feature.txt': 'two\n' }, 'feature two');
    const pushed = await gitSsh(clone, users.writer.key, ['push', '-q', 'origin', 'feature']);
    expect(pushed.code, pushed.stderr).toBe(0);
    expect((await server.call('GET', `/repositories/${projectId}/branches/feature`)).json).toMatchObject({ refName: 'refs/heads/feature' });
    expect((await git(clone, ['ls-remote', gitUrl(server, 'app', ADMIN), 'refs/heads/feature'])).split('\t')[0]).toBe(head);
    await server.settled();
    const updates = await eventually(async () => {
      const list = (await server.call('GET', `/pulls/${pull.json}/updates`)).json as { headCommitHash: string }[];
      return list.some((update) => update.headCommitHash === head) && list;
    });
    expect(updates).toBeTruthy();
    const rows = await server.server.services.db
      .selectFrom('refJournal')
      .selectAll()
      .where('projectId', '=', projectId)
      .where('ref', '=', 'refs/heads/feature')
      .execute();
    expect(rows.map((row) => [row.newHash, row.userId])).toContainEqual([head, users.writer.id]);
  });

  it('fetches with protocol version 2 when asked, version 0 otherwise', async () => {
    const v2 = await gitSsh(clone, users.reader.key, ['-c', 'protocol.version=2', 'fetch', 'origin'], { GIT_TRACE_PACKET: '1' });
    expect(v2.code, v2.stderr).toBe(0);
    expect(v2.stderr, v2.stderr).toMatch(/fetch< version 2/);
    expect(v2.stderr).toMatch(/fetch> command=ls-refs/);
    const v0 = await gitSsh(clone, users.reader.key, ['-c', 'protocol.version=0', 'fetch', 'origin'], { GIT_TRACE_PACKET: '1' });
    expect(v0.code, v0.stderr).toBe(0);
    expect(v0.stderr).not.toMatch(/version 2/);
  });

  it('serves no commit that no ref reaches, in protocol version 2', async () => {
    const dangling = await commitFiles(clone, { 'dangling.txt': 'x\n' }, 'dangling');
    const pushed = await gitSsh(clone, users.writer.key, ['push', '-q', 'origin', 'HEAD:refs/heads/dangling']);
    expect(pushed.code, pushed.stderr).toBe(0);
    expect((await gitSsh(clone, users.writer.key, ['push', '-q', 'origin', ':dangling'])).code).toBe(0);
    const other = await freshDir('dangling');
    await git(other, ['init', '-q']);
    const res = await gitSsh(other, users.reader.key, ['-c', 'protocol.version=2', 'fetch', await sshUrl(), dangling]);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain(`not our ref ${dangling}`);
  });
});

describe('refusals are those of git over HTTP', () => {
  it("refuses a reader's push with the permission message", async () => {
    const dir = await freshDir('reader');
    expect((await gitSsh(dir, users.reader.key, ['clone', '-q', await sshUrl(), '.'])).code).toBe(0);
    await commitFiles(dir, { 'reader.txt': 'no\n' }, 'reader change');
    const res = await gitSsh(dir, users.reader.key, ['push', 'origin', 'main']);
    expect(res.code).not.toBe(0);
    expect(res.stderr).toContain('Gitloom: No permission to push code');
    expect(res.stderr).toContain('Could not read from remote repository');
  });

  it('refuses a forced push to a protected branch with the message HTTP gives, moving nothing', async () => {
    expect((await server.call('POST', `/projects/${projectId}/setting`, { body: { branchProtections: [{ branches: 'main' }] } })).status).toBe(200);
    const dir = await freshDir('protected');
    expect((await gitSsh(dir, users.writer.key, ['clone', '-q', await sshUrl(), '.'])).code).toBe(0);
    const before = (await git(dir, ['rev-parse', 'HEAD'])).trim();
    await git(dir, ['commit', '-q', '--amend', '-m', 'rewritten']);
    const overSsh = await gitSsh(dir, users.writer.key, ['push', '-f', 'origin', 'main']);
    const overHttp = await gitSsh(dir, users.writer.key, ['push', '-f', gitUrl(server, 'app', users.writer), 'main']);
    for (const res of [overSsh, overHttp]) {
      expect(res.code).not.toBe(0);
      expect(res.stderr).toContain('pre-receive hook declined');
    }
    const rejection = (stderr: string) => stderr.split('\n').flatMap((line) => (line.includes('PUSH REJECTED') ? [line.trim()] : []));
    expect(rejection(overSsh.stderr)).toEqual(['remote: *** PUSH REJECTED: refs/heads/main: Can not force-push to this branch ***']);
    expect(rejection(overSsh.stderr)).toEqual(rejection(overHttp.stderr));
    expect((await git(dir, ['ls-remote', gitUrl(server, 'app', ADMIN), 'refs/heads/main'])).split('\t')[0]).toBe(before);
    expect((await server.call('POST', `/projects/${projectId}/setting`, { body: { branchProtections: [] } })).status).toBe(200);
  });

  it('refuses a deleted key at once, and takes a key added again', async () => {
    const keyFile = await keygen('temporary', 'ed25519');
    const line = await fs.readFile(`${keyFile}.pub`, 'utf8');
    const id = (await server.call('POST', `/users/${users.writer.id}/ssh-keys`, { text: line, auth: users.writer.auth })).json;
    expect((await ssh(keyFile, "git-upload-pack '/app.git'")).stdout).toContain('refs/heads/main');
    expect((await server.call('DELETE', `/ssh-keys/${id}`, { auth: users.writer.auth })).status).toBe(200);
    const refused = await ssh(keyFile);
    expect(refused.code).toBe(255);
    expect(refused.stderr).toContain('Permission denied (publickey)');
    expect((await server.call('POST', `/users/${users.writer.id}/ssh-keys`, { text: line, auth: users.writer.auth })).status).toBe(200);
    expect((await ssh(keyFile)).stderr).toContain('Hi writer!');
  });

  it('refuses a deleted user, and a user whose access was taken away, at the next command', async () => {
    const leaving = await server.createUser('leaving');
    const keyFile = await keygen('leaving', 'ecdsa');
    await server.call('POST', `/users/${leaving.id}/ssh-keys`, { text: await fs.readFile(`${keyFile}.pub`, 'utf8'), auth: leaving.auth });
    await grantRole(server, projectId, leaving.id, 'Code Reader');
    expect((await gitSsh(await freshDir('leaving'), keyFile, ['ls-remote', await sshUrl()])).code).toBe(0);
    const grants = (await server.call('GET', `/projects/${projectId}/user-authorizations`)).json as { id: number; userId: number }[];
    const grant = grants.find((g) => g.userId === leaving.id)!;
    expect((await server.call('DELETE', `/user-authorizations/${grant.id}`)).status).toBe(200);
    const revoked = await gitSsh(await freshDir('revoked'), keyFile, ['ls-remote', await sshUrl()]);
    expect(revoked.stderr).toContain('Gitloom: Project not found: app');
    expect((await server.call('DELETE', `/users/${leaving.id}`)).status).toBe(200);
    const gone = await ssh(keyFile);
    expect(gone.code).toBe(255);
    expect(gone.stderr).toContain('Permission denied (publickey)');
  });
});

describe('commands', () => {
  it('greets `ssh host` as GitHub does and exits 1; gives no shell, no other command, no LFS transfer', async () => {
    const shell = await ssh(users.writer.key);
    expect(shell.code).toBe(1);
    expect(shell.stderr).toContain("Hi writer! You've successfully authenticated, but Gitloom does not provide shell access.");
    const unknown = await ssh(users.writer.key, 'cat /etc/passwd');
    expect([unknown.code, unknown.stdout, unknown.stderr.trim()]).toEqual([
      1,
      '',
      "Gitloom: unknown command 'cat': only git-upload-pack and git-receive-pack are served",
    ]);
    const sneaky = await ssh(users.writer.key, "git-upload-pack '/app.git'; rm -rf /");
    expect(sneaky.code).toBe(1);
    expect(sneaky.stderr.trim()).toBe("Gitloom: unknown command 'git-upload-pack '/app.git'; rm -rf /': only git-upload-pack and git-receive-pack are served");
    const control = await ssh(users.writer.key, "git-upload-pack 'app\u0001'");
    expect([control.code, control.stderr.trim()]).toEqual([1, 'Gitloom: Project not found: app?']);
    const transfer = await ssh(users.writer.key, "git-lfs-transfer '/app.git' upload");
    expect([transfer.code, transfer.stderr.trim()]).toEqual([
      1,
      'Gitloom: git-lfs-transfer is not supported: Git LFS objects move over HTTP(S), with the token git-lfs-authenticate gives',
    ]);
    const sftp = await exec('sftp', [...sshOptions(users.writer.key), '-P', String(server.server.ssh!.port), 'git@127.0.0.1'], { input: 'ls\n' });
    expect(sftp.code).not.toBe(0);
  });
});

describe('Git LFS over SSH', () => {
  it('git-lfs-authenticate gives a token of the operation the key owner may do, for the project only', async () => {
    const download = await ssh(users.reader.key, "git-lfs-authenticate '/app.git' download");
    expect(download.code, download.stderr).toBe(0);
    const answer = JSON.parse(download.stdout) as { href: string; header: { Authorization: string }; expires_in: number };
    expect(answer.href).toBe(`${server.url}/app.git/info/lfs`);
    expect(answer.expires_in).toBeGreaterThan(0);
    const batch = await fetch(`${answer.href}/objects/batch`, {
      method: 'POST',
      headers: { ...answer.header, 'content-type': 'application/vnd.git-lfs+json', accept: 'application/vnd.git-lfs+json' },
      body: JSON.stringify({ operation: 'download', objects: [{ oid: 'a'.repeat(64), size: 1 }] }),
    });
    expect(batch.status).toBe(200);
    const upload = await ssh(users.reader.key, "git-lfs-authenticate '/app.git' upload");
    expect([upload.code, upload.stderr.trim()]).toEqual([1, 'Gitloom: No permission to push code']);
    const outsider = await ssh(users.outsider.key, "git-lfs-authenticate '/app.git' download");
    expect(outsider.code).toBe(1);
    expect(outsider.stderr).toContain('Project not found');
    const usage = await ssh(users.writer.key, "git-lfs-authenticate '/app.git' delete");
    expect([usage.code, usage.stderr.trim()]).toEqual([1, 'Gitloom: usage: git-lfs-authenticate <path> download|upload']);
  });

  it('pushes and clones LFS files with git and git-lfs over SSH', async () => {
    const home = await freshDir('lfs-home');
    const env = { HOME: home, GIT_CONFIG_GLOBAL: path.join(home, '.gitconfig') };
    await gitSsh(home, users.writer.key, ['lfs', 'install', '--skip-repo'], env);
    const dir = await freshDir('lfs-push');
    const url = await sshUrl();
    expect((await gitSsh(dir, users.writer.key, ['clone', '-q', url, '.'], env)).code).toBe(0);
    await gitSsh(dir, users.writer.key, ['lfs', 'track', '*.bin'], env);
    const content = Buffer.from(`binary ${'x'.repeat(5000)} ${Date.now()}`);
    await fs.writeFile(path.join(dir, 'asset.bin'), content);
    await gitSsh(dir, users.writer.key, ['add', '.gitattributes', 'asset.bin'], env);
    await gitSsh(dir, users.writer.key, ['commit', '-q', '-m', 'an LFS asset'], env);
    const pushed = await gitSsh(dir, users.writer.key, ['push', '-q', 'origin', 'HEAD:refs/heads/lfs-over-ssh'], env);
    expect(pushed.code, pushed.stderr).toBe(0);
    const other = await freshDir('lfs-clone');
    const cloned = await gitSsh(other, users.reader.key, ['clone', '-q', '-b', 'lfs-over-ssh', url, '.'], env);
    expect(cloned.code, cloned.stderr).toBe(0);
    expect((await fs.readFile(path.join(other, 'asset.bin'))).equals(content)).toBe(true);
  });
});

describe('limits', () => {
  it('runs at most GITLOOM_SSH_MAX_SESSIONS_PER_USER git commands of a user at once', async () => {
    // upload-pack waits for the client after its advertisement: two stay open
    const held = [0, 1].map(() => {
      const child = spawn('ssh', [...sshOptions(users.reader.key), '-p', String(server.server.ssh!.port), 'git@127.0.0.1', "git-upload-pack '/app.git'"]);
      const advertised = new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
      return { child, advertised };
    });
    try {
      await Promise.all(held.map((h) => h.advertised));
      const third = await ssh(users.reader.key, "git-upload-pack '/app.git'");
      expect([third.code, third.stderr.trim()]).toEqual([1, 'Gitloom: too many git commands of reader at once (at most 2); try again shortly']);
      // another user is not held back
      expect((await ssh(users.writer.key, "git-upload-pack '/app.git'")).stdout).toContain('refs/heads/main');
    } finally {
      for (const { child } of held) child.kill();
    }
    // the commands of clients that went away are given back
    expect(await eventually(async () => (await ssh(users.reader.key, "git-upload-pack '/app.git'")).stdout.includes('refs/heads/main'), 5000)).toBe(true);
  });

  it('ends a connection after 6 failed authentication attempts', async () => {
    const strangers = await Promise.all([1, 2, 3, 4, 5, 6, 7].map((i) => keygen(`stranger-${i}`, 'ed25519')));
    const res = await exec('ssh', ['-v', ...sshOptions(strangers), '-p', String(server.server.ssh!.port), 'git@127.0.0.1']);
    expect(res.code).toBe(255);
    // the sixth refusal is the disconnection itself, as with OpenSSH's MaxAuthTries
    expect(res.stderr.match(/Offering public key/g)?.length).toBe(6);
    expect(res.stderr).toMatch(/Received disconnect from 127.0.0.1 port \d+:11:/);
  });
});

describe('a server with small limits', () => {
  let small: TestServer;
  beforeAll(async () => {
    small = await startTestServer({ GITLOOM_SSH_IDLE_TIMEOUT_MS: '1500', GITLOOM_SSH_MAX_UNAUTHENTICATED: '2' }, { ssh: true });
    await small.call('POST', '/users/1/ssh-keys', { text: await fs.readFile(`${users.writer.key}.pub`, 'utf8') });
    await givenProject(small, { name: 'app' });
  });
  afterAll(async () => small?.close());

  it('drops connections beyond GITLOOM_SSH_MAX_UNAUTHENTICATED that have not authenticated', async () => {
    const port = small.server.ssh!.port;
    const identification = (socket: net.Socket) =>
      new Promise<string>((resolve) => {
        let text = '';
        socket.on('data', (chunk) => (text += chunk.toString('latin1')));
        socket.on('close', () => resolve(text));
        setTimeout(() => resolve(text), 1000);
      });
    const open = [0, 1, 2].map(() => net.connect(port, '127.0.0.1'));
    try {
      const seen = await Promise.all(open.map(identification));
      expect(seen.filter((text) => text.startsWith('SSH-2.0-Gitloom')).length).toBe(2);
      expect(seen.filter((text) => text === '').length).toBe(1);
    } finally {
      for (const socket of open) socket.destroy();
    }
  });

  it('closes a connection that stays silent for GITLOOM_SSH_IDLE_TIMEOUT_MS, saying why', async () => {
    await fs.writeFile(path.join(home, 'known_hosts_small'), small.server.ssh!.hostKeys.map((key) => `${HOST_ALIAS} ${key.publicKey}\n`).join(''));
    const started = Date.now();
    // upload-pack advertises, then waits for a client that says nothing more
    const child = spawn('ssh', [
      ...sshOptions(users.writer.key, path.join(home, 'known_hosts_small')),
      '-p',
      String(small.server.ssh!.port),
      'git@127.0.0.1',
      "git-upload-pack '/app.git'",
    ]);
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(Date.now() - started).toBeGreaterThanOrEqual(1400);
    expect(code).not.toBe(0);
    expect(stderr, stderr).toContain('Gitloom: closing the connection after 1.5 s without traffic');
  });
});

describe('restarts', () => {
  it('keeps the host keys, and the known_hosts entries of clients keep working', async () => {
    const before = server.server.ssh!.hostKeys;
    await server.restart();
    expect(server.server.ssh!.hostKeys).toEqual(before);
    const dir = await freshDir('after-restart');
    const res = await gitSsh(dir, users.writer.key, ['clone', '-q', await sshUrl(), '.']);
    expect(res.code, res.stderr).toBe(0);
  });

  it('a `gitloom serve` process prints the fingerprints in its banner, the same after a restart, and serves those keys', async () => {
    const cleanup: (() => Promise<unknown>)[] = [];
    try {
      const port = await freePort();
      const env = await givenInstallation(cleanup, { GITLOOM_SSH_PORT: String(port) });
      const fingerprints = async () => {
        const child = await serveChild(env);
        try {
          const output = await eventually(async () => (/SSH host key fingerprints:\n(( {4}.+\n){2})/.exec(child.output()) ?? [])[1]);
          const scanned = await exec('ssh-keyscan', ['-p', String(port), '-t', 'ed25519,rsa', '127.0.0.1']);
          return { banner: output, served: (await exec('ssh-keygen', ['-l', '-f', '-'], { input: scanned.stdout })).stdout };
        } finally {
          await killChild(child);
        }
      };
      const first = await fingerprints();
      expect(first.banner).toMatch(/^ {4}256 SHA256:\S+ \(ED25519\)\n {4}3072 SHA256:\S+ \(RSA\)\n$/);
      for (const line of first.banner.trim().split('\n')) {
        const [bits, fingerprint] = line.trim().split(' ');
        expect(first.served).toContain(`${bits} ${fingerprint} [127.0.0.1]:${port}`);
      }
      expect((await fingerprints()).banner).toBe(first.banner);
    } finally {
      for (const step of cleanup.reverse()) await step();
    }
  });
});

describe('reading commands', () => {
  it("splits git's quoting as a shell would, and nothing more", () => {
    expect(parseSshCommand("git-upload-pack '/group/app.git'")).toEqual({ kind: 'git', service: 'git-upload-pack', path: '/group/app.git' });
    expect(parseSshCommand("git receive-pack 'group/app'")).toEqual({ kind: 'git', service: 'git-receive-pack', path: 'group/app' });
    // git's sq_quote of `it's!`: 'it'\''s'\!''
    expect(parseSshCommand("git-upload-pack 'it'\\''s'\\!''")).toEqual({ kind: 'git', service: 'git-upload-pack', path: "it's!" });
    expect(parseSshCommand('git-upload-pack /plain/path')).toMatchObject({ kind: 'git', path: '/plain/path' });
    expect(parseSshCommand("git-lfs-authenticate 'app' download")).toEqual({ kind: 'lfs', name: 'git-lfs-authenticate', args: ['app', 'download'] });
    expect(parseSshCommand('git-upload-pack "app"')).toEqual({ kind: 'unknown', name: 'git-upload-pack "app"' });
    expect(parseSshCommand("git-upload-pack 'app")).toMatchObject({ kind: 'unknown' });
    expect(parseSshCommand("git-upload-pack 'a' 'b'")).toMatchObject({ kind: 'unknown' });
    expect(parseSshCommand('bash -i\u001b[2J')).toEqual({ kind: 'unknown', name: 'bash' });
    expect(parseSshCommand('\u001b]0;x')).toEqual({ kind: 'unknown', name: '?]0;x' });
  });
});

describe('configuration', () => {
  it('serves SSH on 6611 by default, off with GITLOOM_SSH_PORT=0, on the HTTP interface unless told', () => {
    expect(loadConfig({})).toMatchObject({
      sshPort: 6611,
      sshHost: '0.0.0.0',
      sshMaxSessionsPerUser: 10,
      sshIdleTimeoutMs: 600_000,
      sshMaxUnauthenticated: 50,
    });
    expect(loadConfig({ GITLOOM_SSH_PORT: '0' }).sshPort).toBeNull();
    expect(loadConfig({ GITLOOM_HOST: '10.0.0.5' }).sshHost).toBe('10.0.0.5');
    expect(loadConfig({ GITLOOM_HOST: '10.0.0.5', GITLOOM_SSH_HOST: '10.0.0.6' }).sshHost).toBe('10.0.0.6');
    expect(() => loadConfig({ GITLOOM_SSH_PORT: '70000' })).toThrow('GITLOOM_SSH_PORT must be at most 65535');
    expect(() => loadConfig({ GITLOOM_SSH_MAX_SESSIONS_PER_USER: '0' })).toThrow('GITLOOM_SSH_MAX_SESSIONS_PER_USER must be a positive integer');
    expect(() => loadConfig({ GITLOOM_SSH_ROOT_URL: 'git@host:' })).toThrow('GITLOOM_SSH_ROOT_URL must start with ssh://');
  });

  it('derives the SSH root of clone URLs from the server URL and the SSH port', () => {
    const config = (env: Record<string, string>) => sshRootUrlOf(loadConfig(env));
    expect(config({ GITLOOM_SERVER_URL: 'https://git.example.com/' })).toBe('ssh://git.example.com:6611');
    expect(config({ GITLOOM_SERVER_URL: 'http://[::1]:6610', GITLOOM_SSH_PORT: '22' })).toBe('ssh://[::1]');
    expect(config({ GITLOOM_SSH_PORT: '0' })).toBeNull();
    expect(config({ GITLOOM_SSH_PORT: '0', GITLOOM_SSH_ROOT_URL: 'ssh://git.example.com:2222/' })).toBe('ssh://git.example.com:2222');
  });
});
