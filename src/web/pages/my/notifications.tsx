/**
 * `/~my/notifications`: what the signed-in user hears of (docs/compatibility.md#notification-inbox):
 * per reason group (participating, mentions, review requests, watching, builds), whether it
 * goes to the inbox and whether it is mailed. Both the inbox and mail follow the choices.
 */
import { getNotificationSettings, REASON_GROUPS, setNotificationSettings } from '../../../domain/notifications/index.js';
import { Notice } from '../../components/flash.js';
import { Checkbox } from '../../components/controls.js';
import { PostForm } from '../../components/forms.js';
import { checked, settingsPost, settingsRoute, SettingsLayout } from '../../components/settings.js';
import type { PageContext, PageModule, PageResult } from '../../page.js';

async function notificationsPage(page: PageContext, error: string | null = null, notice: string | null = null): Promise<PageResult> {
  const settings = new Map((await getNotificationSettings(page.ctx)).map((s) => [s.group, s]));
  return (
    <SettingsLayout page={page} area="my" section="notifications" title="Notifications" error={error}>
      <Notice notice={notice} />
      <p class="meta">
        Choose, for each kind of notification, whether it lands in your <a href="/~inbox">inbox</a> and whether it is mailed to your primary email address. You
        are never told of your own actions.
      </p>
      <PostForm page={page} action="/~my/notifications" class="settings-form notification-settings" label="Notification settings">
        {REASON_GROUPS.map(({ group, label }) => (
          <fieldset key={group}>
            <legend>{label}</legend>
            <Checkbox name={`${group}-inbox`} label="Inbox" checked={settings.get(group)?.inbox ?? true} />
            <Checkbox name={`${group}-mail`} label="Mail" checked={settings.get(group)?.mail ?? true} />
          </fieldset>
        ))}
        <p>
          <button type="submit" class="primary">
            Save notification settings
          </button>
        </p>
      </PostForm>
    </SettingsLayout>
  );
}

export const notificationSettingPages: PageModule = {
  pages: [
    settingsRoute('my', 'GET', '/notifications', (page) => notificationsPage(page)),
    settingsPost(
      'my',
      '/notifications',
      async (page) => {
        await setNotificationSettings(
          page.ctx,
          REASON_GROUPS.map(({ group }) => ({ group, inbox: checked(page.form, `${group}-inbox`), mail: checked(page.form, `${group}-mail`) })),
        );
        return notificationsPage(page, null, 'Notification settings saved.');
      },
      (page, message) => notificationsPage(page, message),
    ),
  ],
};
