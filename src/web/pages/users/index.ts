/** The pages of users outside the settings: profiles (`/~users/…`) and avatars (`/~avatars/…`). */
import type { PageModule } from '../../page.js';
import { avatarImagePages } from './avatar-images.js';
import { profilePages } from './profile.js';

export const userPages: PageModule = {
  pages: [avatarImagePages, profilePages].flatMap((m) => m.pages ?? []),
};
