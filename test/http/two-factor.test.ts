/**
 * Two-factor authentication over HTTP (docs/security.md#two-factor-authentication): enrolment of
 * an authenticator app, the second sign-in step and its refusals (wrong, replayed, used recovery
 * code, expired or ended pending step), password Basic auth refused for git and the API once
 * enrolled while tokens work, enforce2FA, the administrator's reset, and the audit rows.
 */
import { Secret, TOTP } from 'otpauth';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pendingSignIn, SECOND_STEP_TTL_MS } from '../../src/domain/auth/index.js';
import { anonymous, createContext } from '../../src/domain/context.js';
import { csrfTokenOf } from '../helpers/browser.js';
import { givenRepo, grantRole, removeWorkTrees } from '../helpers/fixtures.js';
import { ADMIN, git, gitFails, gitUrl, startTestServer, type TestServer } from '../helpers/server.js';
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs/promises';

/** A visitor over plain HTTP keeping its cookies, as a browser does. */
class Visitor {
  readonly cookies = new Map<string, string>();
  constructor(private readonly server: TestServer) {}

  private keep(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';');
      const [name, value] = [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)];
      const cleared = attributes.some((a) => /^\s*(max-age=0|expires=thu, 01 jan 1970)/i.test(a)) || value === '';
      if (cleared) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  private get cookieHeader(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  async get(route: string): Promise<{ status: number; location: string | null; html: string }> {
    const response = await fetch(`${this.server.url}${route}`, { redirect: 'manual', headers: { cookie: this.cookieHeader } });
    this.keep(response);
    return { status: response.status, location: response.headers.get('location'), html: await response.text() };
  }

  /** Posts a form found at `formPage` (for its CSRF token) to `route`. */
  async post(formPage: string, route: string, fields: Record<string, string>): Promise<{ status: number; location: string | null; html: string }> {
    const csrf = csrfTokenOf((await this.get(formPage)).html);
    const response = await fetch(`${this.server.url}${route}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: this.cookieHeader, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: csrf, ...fields }).toString(),
    });
    this.keep(response);
    return { status: response.status, location: response.headers.get('location'), html: await response.text() };
  }

  signIn(name: string, password: string) {
    return this.post('/~login', '/~login?redirect=%2F~projects', { name, password });
  }

  answer(fields: Record<string, string>) {
    return this.post('/~login', '/~login/two-factor?redirect=%2F~projects', fields);
  }
}

/** The code of `secret` for the time step `offset` steps from now. */
const codeAt = (secret: string, offset = 0) =>
  new TOTP({ secret: Secret.fromBase32(secret), algorithm: 'SHA1', digits: 6, period: 30 }).generate({ timestamp: Date.now() + offset * 30_000 });

/** A code of the right shape that no step within the accepted drift of now has. */
const wrongCode = (secret: string) => ['000000', '111111', '222222', '333333'].find((c) => ![-1, 0, 1, 2].some((o) => codeAt(secret, o) === c))!;

describe('two-factor authentication', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await removeWorkTrees();
    await server?.close();
  });

  const auditActions = async (userId: number) =>
    (
      await server.server.services.db
        .selectFrom('auditEvents')
        .select(['action', 'actorId'])
        .where('targetType', '=', 'user')
        .where('targetId', '=', String(userId))
        .where('action', 'like', 'twoFactor.%')
        .orderBy('id')
        .execute()
    ).map((row) => row.action);

  /** Signs `name` in and enrols an authenticator app; returns its secret and recovery codes. */
  async function enrol(visitor: Visitor, name: string, password: string): Promise<{ secret: string; codes: string[] }> {
    expect((await visitor.signIn(name, password)).status).toBe(303);
    expect((await visitor.post('/~my/two-factor', '/~my/two-factor/totp', {})).location).toBe('/~my/two-factor');
    const page = (await visitor.get('/~my/two-factor')).html;
    const secret = /aria-label="Setup key">([A-Z2-7]+)</.exec(page)?.[1];
    expect(secret, 'the setup key').toBeDefined();
    expect(page).toMatch(/<img class="totp-qr" src="data:image\/png;base64,/);
    const wrong = await visitor.post('/~my/two-factor', '/~my/two-factor/totp/confirm', { code: wrongCode(secret!) });
    expect(wrong.status).toBe(400);
    expect(wrong.html).toContain('Wrong code');
    const confirmed = await visitor.post('/~my/two-factor', '/~my/two-factor/totp/confirm', { code: codeAt(secret!) });
    expect(confirmed.status).toBe(200);
    const codes = [...confirmed.html.matchAll(/<code>([0-9a-f]{5}-[0-9a-f]{5})<\/code>/g)].map((m) => m[1]);
    expect(codes).toHaveLength(10);
    await visitor.post('/~my/two-factor', '/~logout', {});
    return { secret: secret!, codes };
  }

  it('signs in in two steps: a code once, a recovery code once; wrong and replayed codes are refused and audited', async () => {
    const alice = await server.createUser('alice');
    const { secret, codes } = await enrol(new Visitor(server), 'alice', alice.password);
    // at rest: the TOTP secret encrypted, the recovery codes hashed
    const db = server.server.services.db;
    const stored = await db.selectFrom('totpSecrets').select('secret').where('userId', '=', alice.id).executeTakeFirstOrThrow();
    expect(stored.secret).toMatch(/^v1:/);
    expect(stored.secret).not.toContain(secret);
    const hashes = await db.selectFrom('recoveryCodes').select('codeHash').where('userId', '=', alice.id).execute();
    expect(hashes).toHaveLength(10);
    for (const { codeHash } of hashes) expect(codeHash).toMatch(/^[0-9a-f]{64}$/);

    const visitor = new Visitor(server);
    const first = await visitor.signIn('alice', alice.password);
    expect(decodeURIComponent(first.location!)).toBe('/~login/two-factor?redirect=/~projects');
    expect(visitor.cookies.has('gitloom_session')).toBe(false);
    expect(visitor.cookies.has('gitloom_two_factor')).toBe(true);
    // no session yet: the pages still ask to sign in
    expect((await visitor.get('/~projects')).location).toMatch(/^\/~login/);
    const step = await visitor.get('/~login/two-factor');
    expect(step.status).toBe(200);
    expect(step.html).toContain('Signing in as alice');

    const wrong = await visitor.answer({ code: wrongCode(secret) });
    expect(wrong.status).toBe(401);
    expect(wrong.html).toContain('Wrong code');
    // the enrolment used the current step: the next one signs in
    const code = codeAt(secret, 1);
    const done = await visitor.answer({ code });
    expect(done.status).toBe(303);
    expect(done.location).toBe('/~projects');
    expect(visitor.cookies.has('gitloom_two_factor')).toBe(false);
    expect((await visitor.get('/~projects')).status).toBe(200);

    const replay = new Visitor(server);
    await replay.signIn('alice', alice.password);
    const replayed = await replay.answer({ code });
    expect(replayed.status).toBe(401);
    expect(replayed.html).toContain('used already');

    const recovered = await replay.answer({ recoveryCode: codes[3].toUpperCase() });
    expect(recovered.location).toBe('/~projects');
    const again = new Visitor(server);
    await again.signIn('alice', alice.password);
    const used = await again.answer({ recoveryCode: codes[3] });
    expect(used.status).toBe(401);
    expect(used.html).toContain('Wrong or used recovery code');

    expect(await auditActions(alice.id)).toEqual(['twoFactor.enrolTotp', 'twoFactor.signInFailure', 'twoFactor.signInFailure', 'twoFactor.signInFailure']);
  });

  it('ends a pending sign-in after five wrong answers, when it expires, and without its cookie', async () => {
    const bob = await server.createUser('bob');
    const { codes } = await enrol(new Visitor(server), 'bob', bob.password);

    const visitor = new Visitor(server);
    await visitor.signIn('bob', bob.password);
    for (let i = 0; i < 5; i++) expect((await visitor.answer({ recoveryCode: 'aaaaa-aaaaa' })).status).toBe(401);
    const ended = await visitor.answer({ recoveryCode: codes[0] });
    expect(ended.status).toBe(401);
    expect(ended.html).toContain('sign in again');
    expect(ended.html).toContain('Sign in again');

    const cookieless = await new Visitor(server).answer({ recoveryCode: codes[0] });
    expect(cookieless.status).toBe(401);
    expect(cookieless.html).toContain('waited too long');

    // a pending sign-in read after its 5 minutes: as the server would at that time
    const late = new Visitor(server);
    await late.signIn('bob', bob.password);
    const token = decodeURIComponent(late.cookies.get('gitloom_two_factor')!).replace(/\.[^.]+$/, '');
    const ctx = createContext(server.server.services, anonymous);
    expect((await pendingSignIn(ctx, token)).name).toBe('bob');
    await expect(pendingSignIn({ ...ctx, now: () => Date.now() + SECOND_STEP_TTL_MS + 1 }, token)).rejects.toMatchObject({
      status: 401,
      code: 'GITLOOM_ERR_TWO_FACTOR_EXPIRED',
    });
    // the recovery code was never consumed by the refused attempts
    expect((await late.answer({ recoveryCode: codes[0] })).location).toBe('/~projects');
  });

  it('refuses the password for git and the API once enrolled, with a message pointing to access tokens; tokens work', async () => {
    const carol = await server.createUser('carol');
    const repo = await givenRepo(server, 'two-factor-repo');
    await grantRole(server, repo.id, carol.id, 'Code Writer');
    const token = await server.call('POST', `/users/${carol.id}/access-tokens`, { auth: carol.auth });
    expect(token.status).toBe(200);

    await enrol(new Visitor(server), 'carol', carol.password);

    const refused = await server.call('GET', '/users/me', { auth: carol.auth });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('content-type')).toContain('application/problem+json');
    expect(refused.json).toMatchObject({ status: 401, code: 'GITLOOM_ERR_TWO_FACTOR_REQUIRED' });
    expect((refused.json as { detail: string }).detail).toContain('access token');
    const byToken = await server.call('GET', '/users/me', { auth: `Bearer ${token.text}` });
    expect(byToken.json).toMatchObject({ name: 'carol' });

    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'gitloom-2fa-'));
    try {
      const stderr = await gitFails(dir, ['clone', '-q', gitUrl(server, repo.path, { name: 'carol', password: carol.password }), 'by-password']);
      expect(stderr).toMatch(/Authentication failed|401/);
      await git(dir, ['clone', '-q', gitUrl(server, repo.path, { name: 'carol', password: token.text }), 'by-token']);
      await fs.writeFile(path.join(dir, 'by-token', 'two-factor.txt'), 'pushed with a token\n');
      await git(path.join(dir, 'by-token'), ['add', '.']);
      await git(path.join(dir, 'by-token'), ['commit', '-qm', 'With a token']);
      await git(path.join(dir, 'by-token'), ['push', '-q', 'origin', 'main']);
      expect((await git(dir, ['ls-remote', gitUrl(server, repo.path, { name: 'carol', password: token.text }), 'refs/heads/main'])).split('\t')[0]).toBe(
        (await git(path.join(dir, 'by-token'), ['rev-parse', 'HEAD'])).trim(),
      );
    } finally {
      await fs.rm(dir, { recursive: true, force: true });
    }
  });

  it('asks for proof to regenerate codes and turn off; an administrator resets a user; every change is audited', async () => {
    const dave = await server.createUser('dave');
    const { secret } = await enrol(new Visitor(server), 'dave', dave.password);
    const visitor = new Visitor(server);
    await visitor.signIn('dave', dave.password);
    expect((await visitor.answer({ code: codeAt(secret, 1) })).status).toBe(303);

    const wrongProof = await visitor.post('/~my/two-factor', '/~my/two-factor/recovery-codes', { proof: 'not my password' });
    expect(wrongProof.status).toBe(403);
    expect(wrongProof.html).toContain('Wrong password or code');
    const regenerated = await visitor.post('/~my/two-factor', '/~my/two-factor/recovery-codes', { proof: dave.password });
    expect(regenerated.status).toBe(200);
    expect([...regenerated.html.matchAll(/<code>([0-9a-f]{5}-[0-9a-f]{5})<\/code>/g)]).toHaveLength(10);
    expect((await visitor.post('/~my/two-factor', '/~my/two-factor/disable', { proof: dave.password })).location).toBe('/~my/two-factor');
    expect((await server.call('GET', '/users/me', { auth: dave.auth })).status).toBe(200);

    // enrolled again, then reset by the administrator
    await enrol(new Visitor(server), 'dave', dave.password);
    expect((await server.call('GET', '/users/me', { auth: dave.auth })).status).toBe(401);
    const admin = new Visitor(server);
    expect((await admin.signIn(ADMIN.name, ADMIN.password)).status).toBe(303);
    const userPage = await admin.get(`/~administration/users/${dave.id}`);
    expect(userPage.html).toContain('Reset two-factor');
    expect((await admin.post(`/~administration/users/${dave.id}`, `/~administration/users/${dave.id}/two-factor/reset`, {})).location).toBe(
      `/~administration/users/${dave.id}`,
    );
    expect((await server.call('GET', '/users/me', { auth: dave.auth })).status).toBe(200);
    const notAgain = await admin.post(`/~administration/users/${dave.id}`, `/~administration/users/${dave.id}/two-factor/reset`, {});
    expect(notAgain.status).toBe(409);

    expect(await auditActions(dave.id)).toEqual([
      'twoFactor.enrolTotp',
      'twoFactor.regenerateRecoveryCodes',
      'twoFactor.disable',
      'twoFactor.enrolTotp',
      'twoFactor.reset',
    ]);
    const reset = await server.server.services.db.selectFrom('auditEvents').selectAll().where('action', '=', 'twoFactor.reset').executeTakeFirstOrThrow();
    expect(reset).toMatchObject({ actorName: ADMIN.name, targetName: 'dave' });
  });

  it('sends a user whom enforce2FA applies to to enrolment, and nowhere else until enrolled', async () => {
    const erin = await server.createUser('erin');
    const group = await server.call('POST', '/groups', { body: { name: 'secured', enforce2FA: true } });
    expect(group.status).toBe(200);
    expect((await server.call('POST', '/memberships', { body: { userId: erin.id, groupId: group.json } })).status).toBe(200);

    const visitor = new Visitor(server);
    await visitor.signIn('erin', erin.password);
    expect((await visitor.get('/~projects')).location).toBe('/~my/two-factor');
    expect((await visitor.get('/~my/profile')).location).toBe('/~my/two-factor');
    const enrolment = await visitor.get('/~my/two-factor');
    expect(enrolment.status).toBe(200);
    expect(enrolment.html).toContain('Two-factor authentication is required for your account');
    // the header's avatar still shows
    expect((await visitor.get(`/~avatars/${erin.id}`)).status).toBe(200);

    expect((await visitor.post('/~my/two-factor', '/~my/two-factor/totp', {})).status).toBe(303);
    const secret = /aria-label="Setup key">([A-Z2-7]+)</.exec((await visitor.get('/~my/two-factor')).html)![1];
    expect((await visitor.post('/~my/two-factor', '/~my/two-factor/totp/confirm', { code: codeAt(secret) })).status).toBe(200);
    expect((await visitor.get('/~projects')).status).toBe(200);
  });
});
