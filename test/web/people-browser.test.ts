import sharp from 'sharp';
import { describe, expect, it } from 'vitest';
import { browserTests } from '../helpers/browser.js';
import { givenUsers, type TestUser } from '../helpers/fixtures.js';

/** Uploading an avatar in Chromium and seeing it in the header, then deleting it. */
describe('avatars in a browser', () => {
  let erin: TestUser;
  const web = browserTests(async (server) => {
    [erin] = await givenUsers(server, 'erin');
  });

  it('uploads an avatar through the settings form and shows it in the header, without layout shift', async () => {
    const page = await web.signedIn('erin', erin.password);
    const header = page.locator('header .menu summary img.avatar');
    expect(await header.getAttribute('src')).toBe(`/~avatars/${erin.id}?v=0`);
    expect([await header.getAttribute('width'), await header.getAttribute('height'), await header.getAttribute('alt')]).toEqual(['20', '20', '']);

    await page.goto(`${web.server.url}/~my`);
    await page.getByRole('link', { name: 'Avatar' }).click();
    expect(await page.title()).toBe('Avatar · My settings · Gitloom');
    const photo = await sharp({ create: { width: 800, height: 600, channels: 3, background: '#d94f00' } })
      .jpeg()
      .toBuffer();
    const form = page.getByRole('form', { name: 'Upload avatar' });
    await form.getByLabel(/^Image/).setInputFiles({ name: 'portrait.jpeg', mimeType: 'image/jpeg', buffer: photo });
    await form.getByRole('button', { name: 'Upload avatar' }).click();
    await page.waitForURL(`${web.server.url}/~my/avatar`);
    await expect.poll(() => page.getByText('Your uploaded avatar.').count()).toBe(1);

    expect(await header.getAttribute('src')).toBe(`/~avatars/${erin.id}?v=1`);
    // the browser decoded the served image: 256×256 pixels drawn in a 20×20 box
    await header.scrollIntoViewIfNeeded();
    await expect
      .poll(() => header.evaluate((img: HTMLImageElement) => (img.complete ? [img.naturalWidth, img.naturalHeight, img.width, img.height] : null)))
      .toEqual([256, 256, 20, 20]);

    // a refused file shows the message in the page, and the avatar stays
    await form.getByLabel(/^Image/).setInputFiles({ name: 'notes.png', mimeType: 'image/png', buffer: Buffer.from('not an image') });
    await form.getByRole('button', { name: 'Upload avatar' }).click();
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('must be a JPEG, PNG, WebP or GIF image');
    expect(await header.getAttribute('src')).toBe(`/~avatars/${erin.id}?v=1`);

    await page.getByRole('button', { name: 'Delete uploaded avatar' }).click();
    await page.waitForURL(`${web.server.url}/~my/avatar`);
    expect(await header.getAttribute('src')).toBe(`/~avatars/${erin.id}?v=2`);
    await expect.poll(() => header.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true);
  });
});
