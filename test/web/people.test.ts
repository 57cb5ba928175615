import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import path from 'node:path';
import { deflateSync } from 'node:zlib';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signInByFetch, type WebSession } from '../helpers/browser.js';
import { givenProject, givenRepo, givenUsers, grantRole, removeWorkTrees, type TestUser } from '../helpers/fixtures.js';
import { startTestServer, type TestServer } from '../helpers/server.js';

/** A PNG chunk: length, type, data, CRC-32. */
function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

function crc32(data: Buffer): number {
  let crc = ~0;
  for (const byte of data) {
    crc ^= byte;
    for (let k = 0; k < 8; k++) crc = (crc >>> 1) ^ (0xedb88320 & -(crc & 1));
  }
  return ~crc >>> 0;
}

/** A decompression bomb: a valid 20000×20000 1-bit PNG of zeros, a few tens of KiB compressed. */
function pngBomb(): Buffer {
  const side = 20_000;
  const header = Buffer.alloc(13);
  header.writeUInt32BE(side, 0);
  header.writeUInt32BE(side, 4);
  header[8] = 1; // bit depth
  header[9] = 0; // greyscale
  const raw = Buffer.alloc(side * (1 + side / 8));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', header),
    pngChunk('IDAT', deflateSync(raw, { level: 9 })),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A 640×480 JPEG carrying EXIF: camera make, copyright and a GPS position. */
function jpegWithGps(): Promise<Buffer> {
  return sharp({ create: { width: 640, height: 480, channels: 3, background: '#3366cc' } })
    .withExif({
      IFD0: { Copyright: 'Somebody', Make: 'Camera' },
      IFD3: { GPSLatitudeRef: 'N', GPSLatitude: '48/1 51/1 24/1', GPSLongitudeRef: 'E', GPSLongitude: '2/1 21/1 3/1' },
    })
    .jpeg()
    .toBuffer();
}

/** Dashboards, profiles and avatars over plain HTTP. */
describe('dashboard, profiles and avatars', () => {
  let server: TestServer;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  let bobSession: WebSession;
  let aliceSession: WebSession;
  const ids: Record<string, number> = {};

  beforeAll(async () => {
    server = await startTestServer();
    [alice, bob, carol] = await givenUsers(server, 'alice', 'bob', 'carol');
    for (const name of ['alpha', 'beta', 'owned', 'secret', 'open-house']) ids[name] = await givenProject(server, { name });
    // open-house is readable by every signed-in user through its default role
    expect((await server.call('POST', `/projects/${ids['open-house']}`, { body: { name: 'open-house', defaultRoleId: 3 } })).status).toBe(200);
    await grantRole(server, ids.alpha, bob.id, 'Code Reader');
    await grantRole(server, ids.owned, bob.id, 'Project Owner');
    const team = (await server.call('POST', '/groups', { body: { name: 'team' } })).json as number;
    expect((await server.call('POST', '/memberships', { body: { userId: bob.id, groupId: team } })).status).toBe(200);
    expect((await server.call('POST', '/group-authorizations', { body: { projectId: ids.beta, groupId: team, roleId: 2 } })).status).toBe(200);
    // alice works in the readable project and in the secret one
    await grantRole(server, ids.secret, alice.id, 'Code Writer');
    await grantRole(server, ids['open-house'], alice.id, 'Code Writer');
    const open = async (projectId: number, title: string, fields: Record<string, unknown> = {}) => {
      const res = await server.call('POST', '/issues', { body: { projectId, title, fields }, auth: alice.auth });
      expect(res.status, res.text).toBe(200);
      return res.json as number;
    };
    await open(ids.secret, 'Secret launch plan');
    ids.roadmap = await open(ids['open-house'], 'Public roadmap');
    await open(ids['open-house'], 'Fix the doorbell', { Assignees: ['bob'] });
    bobSession = await signInByFetch(server, 'bob', bob.password);
    aliceSession = await signInByFetch(server, 'alice', alice.password);
  });
  afterAll(async () => {
    await removeWorkTrees();
    await server?.close();
  });

  const get = (url: string, session: WebSession | null = bobSession, headers: Record<string, string> = {}) =>
    fetch(`${server.url}${url}`, { redirect: 'manual', headers: { ...headers, ...(session ? { cookie: session.cookie } : {}) } });
  const upload = (data: Buffer, name: string, session: WebSession = bobSession, csrf = session.csrfToken) => {
    const form = new FormData();
    form.set('_csrf', csrf);
    form.set('avatar', new Blob([new Uint8Array(data)]), name);
    return fetch(`${server.url}/~my/avatar`, { method: 'POST', redirect: 'manual', headers: { cookie: session.cookie }, body: form });
  };
  const post = (url: string, session: WebSession = bobSession) =>
    fetch(`${server.url}${url}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: session.cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ _csrf: session.csrfToken }).toString(),
    });
  const avatarFiles = async () => (existsSync(path.join(server.dataDir, 'avatars')) ? (await readdir(path.join(server.dataDir, 'avatars'))).sort() : []);
  /** The avatar URL the header of `session`'s user shows. */
  const headerAvatar = async (session: WebSession) => /<summary><img class="avatar" src="([^"]+)"/.exec(await (await get('/', session)).text())?.[1];

  describe('dashboard', () => {
    it('lists the projects the user is a member of, by role, by group and as owner, with the role', async () => {
      const html = await (await get('/')).text();
      const section = html.slice(html.indexOf('id="my-projects"'), html.indexOf('id="to-review"'));
      expect(section).toContain('href="/alpha"');
      expect(section).toContain('Code Reader');
      expect(section).toContain('href="/beta"');
      expect(section).toContain('Code Writer (group team)');
      expect(section).toContain('href="/owned"');
      expect(section).toContain('Project Owner');
      // readable through a default role only: no membership
      expect(section).not.toContain('href="/open-house"');
      expect(section).not.toContain('You are a member of no project yet');
    });

    it('never shows a private project, its title or its work', async () => {
      const html = await (await get('/')).text();
      expect(html).not.toContain('secret');
      expect(html).not.toContain('Secret launch plan');
      const carolSession = await signInByFetch(server, 'carol', carol.password);
      const carols = await (await get('/', carolSession)).text();
      expect(carols).toContain('You are a member of no project yet.');
      expect(carols).not.toContain('Secret launch plan');
    });

    it("shows the user's pending work and the recent activity they can read", async () => {
      const html = await (await get('/')).text();
      const assigned = html.slice(html.indexOf('id="assigned"'), html.indexOf('id="my-pulls"'));
      expect(assigned).toContain('Fix the doorbell');
      expect(assigned).not.toContain('Public roadmap');
      const recent = html.slice(html.indexOf('id="recent-activity"'));
      expect(recent).toContain('href="/open-house/~issues/1"');
      expect(recent).toContain('Public roadmap');
      expect(recent).toContain(`src="/~avatars/${alice.id}?v=0"`);
    });
  });

  describe('profiles', () => {
    it("shows a user's names, avatar and the work the visitor can read, by name or id", async () => {
      expect((await server.call('POST', `/users/${alice.id}`, { body: { name: 'alice', fullName: 'Alice Liddell' } })).status).toBe(200);
      for (const key of ['alice', 'Alice', String(alice.id)]) {
        const response = await get(`/~users/${key}`);
        expect(response.status, key).toBe(200);
        const html = await response.text();
        expect(html).toContain('<h1>Alice Liddell</h1>');
        expect(html).toContain(`src="/~avatars/${alice.id}?v=0"`);
        expect(html).toContain('Public roadmap');
        expect(html).not.toContain('Secret launch plan');
        expect(html).not.toContain('secret');
        expect(html).not.toContain('alice@example.com');
      }
    });

    it('shows the private work to a visitor who can read it', async () => {
      const html = await (await get('/~users/alice', aliceSession)).text();
      expect(html).toContain('Secret launch plan');
    });

    it('answers 404 for an unknown user and sends anonymous visitors to sign in', async () => {
      expect((await get('/~users/nobody')).status).toBe(404);
      expect((await get('/~users/999999')).status).toBe(404);
      const anonymous = await get('/~users/alice', null);
      expect(anonymous.status).toBe(302);
      expect(anonymous.headers.get('location')).toContain('/~login');
    });

    it('shows avatars beside authors in issue lists and conversations', async () => {
      const issue = { id: ids.roadmap, number: 1 };
      expect((await server.call('POST', '/issue-comments', { body: { issueId: issue.id, content: 'On it', userId: bob.id }, auth: bob.auth })).status).toBe(
        200,
      );
      const list = await (await get('/open-house/~issues')).text();
      expect(list).toMatch(new RegExp(`opened by <img class="avatar" src="/~avatars/${alice.id}\\?v=\\d+" alt width="16" height="16" loading="lazy"`));
      const conversation = await (await get(`/open-house/~issues/${issue.number}`)).text();
      expect(conversation).toMatch(
        new RegExp(`<img class="avatar" src="/~avatars/${bob.id}\\?v=\\d+" alt width="20" height="20" loading="lazy" decoding="async"/> <strong>bob</strong>`),
      );
    });

    it('lists pull requests to review and assigned, with avatars in the list and the conversation', async () => {
      const repo = await givenRepo(server, 'code');
      await grantRole(server, repo.id, bob.id, 'Code Writer');
      await grantRole(server, repo.id, alice.id, 'Code Writer');
      await repo.commitOn('feature', { 'feature.txt': 'new\n' }, 'A feature');
      const opened = await server.call('POST', '/pulls', {
        body: { targetProjectId: repo.id, sourceProjectId: repo.id, targetBranch: 'main', sourceBranch: 'feature', title: 'Add the feature' },
        auth: alice.auth,
      });
      expect(opened.status, opened.text).toBe(200);
      await server.settled();
      const requestId = opened.json as number;
      expect((await server.call('POST', '/pull-request-reviews', { body: { requestId, userId: bob.id } })).status).toBe(200);
      expect((await server.call('POST', '/pull-request-assignments', { body: { requestId, userId: bob.id } })).status).toBe(200);
      expect((await server.call('POST', '/pull-request-comments', { body: { requestId, content: 'Looking' }, auth: bob.auth })).status).toBe(200);
      const dashboard = await (await get('/')).text();
      const review = dashboard.slice(dashboard.indexOf('id="to-review"'), dashboard.indexOf('id="assigned"'));
      expect(review).toContain('href="/code/~pulls/1"');
      const assigned = dashboard.slice(dashboard.indexOf('id="assigned"'), dashboard.indexOf('id="my-pulls"'));
      expect(assigned).toContain('Add the feature');
      const list = await (await get('/code/~pulls')).text();
      expect(list).toMatch(new RegExp(`<img class="avatar" src="/~avatars/${alice.id}\\?v=\\d+" alt width="16" height="16"`));
      const conversation = await (await get('/code/~pulls/1')).text();
      expect(conversation).toMatch(
        new RegExp(`<img class="avatar" src="/~avatars/${bob.id}\\?v=\\d+" alt width="20" height="20" loading="lazy" decoding="async"/> <strong>bob</strong>`),
      );
    });

    it('is linked from the header menu', async () => {
      expect(await (await get('/')).text()).toContain(`href="/~users/${bob.id}"`);
    });
  });

  describe('avatars', () => {
    it('serves a stable identicon without an upload, cached for good at its version', async () => {
      const first = await get(`/~avatars/${carol.id}?v=0`);
      expect(first.status).toBe(200);
      expect(first.headers.get('content-type')).toBe('image/svg+xml');
      expect(first.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(first.headers.get('x-content-type-options')).toBe('nosniff');
      expect(first.headers.get('content-security-policy')).toContain("default-src 'none'");
      const etag = first.headers.get('etag')!;
      expect(etag).toMatch(/^"/);
      const svg = await first.text();
      expect(svg).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
      expect(svg).not.toMatch(/<script|href=/i);
      expect(await (await get(`/~avatars/${carol.id}?v=0`)).text()).toBe(svg);
      expect(await (await get(`/~avatars/${alice.id}?v=0`)).text()).not.toBe(svg);
      // another version than the current one is revalidated, and an unchanged one is 304
      expect((await get(`/~avatars/${carol.id}`)).headers.get('cache-control')).toBe('no-cache');
      const again = await get(`/~avatars/${carol.id}?v=0`, bobSession, { 'if-none-match': etag });
      expect(again.status).toBe(304);
      expect((await get('/~avatars/999999')).status).toBe(404);
      expect((await get('/~avatars/abc')).status).toBe(404);
      // anonymous access is off: an anonymous visitor is sent to sign in, as for every page
      expect((await get(`/~avatars/${carol.id}?v=0`, null)).status).toBe(302);
    });

    it('shows the avatar in the header', async () => {
      expect(await headerAvatar(bobSession)).toBe(`/~avatars/${bob.id}?v=0`);
      const html = await (await get('/')).text();
      expect(html).toMatch(/<summary><img class="avatar" src="[^"]+" alt width="20" height="20" loading="lazy"/);
    });

    it('resizes an uploaded JPEG to 256×256 and strips its EXIF (GPS included)', async () => {
      const original = await jpegWithGps();
      expect((await sharp(original).metadata()).exif).toBeDefined();
      const response = await upload(original, 'holiday.jpg');
      expect(response.status, await response.text()).toBe(303);
      expect(response.headers.get('location')).toBe('/~my/avatar');
      expect(await headerAvatar(bobSession)).toBe(`/~avatars/${bob.id}?v=1`);
      const served = await get(`/~avatars/${bob.id}?v=1`);
      expect(served.status).toBe(200);
      expect(served.headers.get('content-type')).toBe('image/jpeg');
      expect(served.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      const body = Buffer.from(await served.arrayBuffer());
      const meta = await sharp(body).metadata();
      expect([meta.format, meta.width, meta.height]).toEqual(['jpeg', 256, 256]);
      expect(meta.exif).toBeUndefined();
      expect(meta.xmp).toBeUndefined();
      expect(meta.icc).toBeUndefined();
      expect(body.includes(Buffer.from('Camera'))).toBe(false);
      expect(await avatarFiles()).toEqual([`${bob.id}-1`]);
      const page = await (await get('/~my/avatar')).text();
      expect(page).toContain('Your uploaded avatar.');
      expect(page).toContain('Delete uploaded avatar');
    });

    it('takes a PNG, WebP or GIF by its content whatever its name, as a PNG', async () => {
      const png = await sharp({ create: { width: 300, height: 100, channels: 4, background: { r: 0, g: 128, b: 0, alpha: 0.5 } } })
        .webp()
        .toBuffer();
      const response = await upload(png, 'picture.txt', aliceSession);
      expect(response.status, await response.text()).toBe(303);
      const served = await get(`/~avatars/${alice.id}?v=1`);
      expect(served.headers.get('content-type')).toBe('image/png');
      const meta = await sharp(Buffer.from(await served.arrayBuffer())).metadata();
      expect([meta.format, meta.width, meta.height, meta.hasAlpha]).toEqual(['png', 256, 256, true]);
      const gif = await sharp({ create: { width: 40, height: 40, channels: 3, background: '#ff0000' } })
        .gif()
        .toBuffer();
      expect((await upload(gif, 'x.gif', aliceSession)).status).toBe(303);
      expect((await get(`/~avatars/${alice.id}?v=2`)).headers.get('content-type')).toBe('image/png');
    });

    it('refuses a non-image, a too large file and a decompression bomb with a message, changing nothing', async () => {
      const before = await avatarFiles();
      const refusals: [Buffer, string, number, string][] = [
        [Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'), 'evil.png', 400, 'must be a JPEG, PNG, WebP or GIF image'],
        [Buffer.from('plain text, not an image'), 'notes.jpg', 400, 'must be a JPEG, PNG, WebP or GIF image'],
        [Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.from('broken')]), 'broken.jpg', 400, 'no readable JPEG image'],
        [Buffer.concat([Buffer.from([0xff, 0xd8, 0xff]), Buffer.alloc(6 * 1024 * 1024)]), 'huge.jpg', 413, 'larger than 5 MiB'],
        [pngBomb(), 'bomb.png', 400, 'The image is too large: 20000×20000 pixels'],
        [Buffer.alloc(0), 'empty.png', 400, 'Choose an image file to upload'],
      ];
      for (const [data, name, status, message] of refusals) {
        const response = await upload(data, name);
        expect(response.status, name).toBe(status);
        expect(await response.text(), name).toContain(message);
      }
      const tooBig = await upload(Buffer.alloc(9 * 1024 * 1024), 'giant.png');
      expect(tooBig.status).toBe(413);
      expect(await avatarFiles()).toEqual(before);
      expect(await headerAvatar(bobSession)).toBe(`/~avatars/${bob.id}?v=1`);
    });

    it('refuses an upload without the CSRF token', async () => {
      const response = await upload(await jpegWithGps(), 'a.jpg', bobSession, 'wrong');
      expect(response.status).toBe(403);
      expect(await headerAvatar(bobSession)).toBe(`/~avatars/${bob.id}?v=1`);
    });

    it('returns to the identicon when the upload is deleted', async () => {
      const response = await post('/~my/avatar/delete');
      expect(response.status).toBe(303);
      expect(await headerAvatar(bobSession)).toBe(`/~avatars/${bob.id}?v=2`);
      const served = await get(`/~avatars/${bob.id}?v=2`);
      expect(served.headers.get('content-type')).toBe('image/svg+xml');
      expect(await avatarFiles()).not.toContain(`${bob.id}-1`);
      expect(await (await get('/~my/avatar')).text()).not.toContain('Delete uploaded avatar');
      expect((await post('/~my/avatar/delete')).status).toBe(404);
    });

    it('removes the file when the user is deleted', async () => {
      const [dave] = await givenUsers(server, 'dave');
      const session = await signInByFetch(server, 'dave', dave.password);
      expect((await upload(await jpegWithGps(), 'me.jpg', session)).status).toBe(303);
      expect(await avatarFiles()).toContain(`${dave.id}-1`);
      expect((await server.call('DELETE', `/users/${dave.id}`)).status).toBe(200);
      expect(await avatarFiles()).not.toContain(`${dave.id}-1`);
    });
  });
});
