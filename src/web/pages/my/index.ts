/** The personal settings pages (`/~my/…`) of the signed-in user. */
import type { PageModule } from '../../page.js';
import { accessTokenPages } from './access-tokens.js';
import { notificationSettingPages } from './notifications.js';
import { avatarPages } from './avatar.js';
import { profilePages } from './profile.js';
import { queryAndWatchPages } from './queries-and-watches.js';
import { sessionPages } from './sessions.js';
import { sshKeyPages } from './ssh-keys.js';
import { twoFactorPages } from './two-factor.js';

export const personalSettingsPages: PageModule = {
  pages: [profilePages, avatarPages, twoFactorPages, accessTokenPages, sessionPages, sshKeyPages, queryAndWatchPages, notificationSettingPages].flatMap(
    (m) => m.pages ?? [],
  ),
};
