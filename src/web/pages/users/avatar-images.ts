/**
 * `/~avatars/<user id>` (docs/compatibility.md#gitloom-differs-web-ui "Avatars"): a user's
 * avatar — the uploaded image (JPEG or PNG) or the generated identicon (SVG). Asked with the
 * current version (`?v=<version>`, as every page links it) it is cached for good
 * (`immutable`); otherwise the browser revalidates it by its ETag. Served as user content:
 * `nosniff`, and a CSP that lets an SVG run nothing and load nothing.
 */
import { userAvatar } from '../../../domain/users/index.js';
import { NotFound } from '../../../errors.js';
import { rawResponse, type PageModule } from '../../page.js';

/** The CSP of an avatar: nothing loads, nothing runs; inline styles only (an SVG's own). */
const AVATAR_CSP = "default-src 'none'; style-src 'unsafe-inline'; sandbox";

export const avatarImagePages: PageModule = {
  pages: [
    {
      method: 'GET',
      path: '/~avatars/:id',
      handler: async (page) => {
        const id = Number(page.params.id);
        if (!/^-?\d{1,9}$/.test(page.params.id ?? '')) throw new NotFound(`User not found: ${page.params.id}`);
        const avatar = await userAvatar(page.ctx, id);
        const headers = {
          ETag: avatar.etag,
          'Content-Security-Policy': AVATAR_CSP,
          'Cache-Control': page.query.v === String(avatar.version) ? 'public, max-age=31536000, immutable' : 'no-cache',
        };
        const known = (page.request.headers['if-none-match'] ?? '').split(',').map((tag) => tag.trim());
        if (known.includes(avatar.etag) || known.includes('*')) {
          page.reply.code(304);
          return rawResponse(avatar.type, '', headers);
        }
        return rawResponse(avatar.type, avatar.body, { ...headers, 'Content-Length': String(avatar.body.length) });
      },
    },
  ],
};
