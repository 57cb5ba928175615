/**
 * `/~my/avatar` (docs/compatibility.md#gitloom-differs-web-ui "Avatars"): the signed-in user's
 * avatar — upload an image (a multipart form: JPEG, PNG, WebP or GIF up to 5 MiB, re-encoded
 * to 256×256 without metadata by the domain) or delete the upload to get the identicon back.
 */
import { deleteAvatar, hasUploadedAvatar, uploadAvatar } from '../../../domain/users/index.js';
import { Avatar } from '../../components/avatar.js';
import { PostForm } from '../../components/forms.js';
import { me, settingsPost, settingsRoute, SettingsLayout } from '../../components/settings.js';
import { uploadedFiles } from '../../multipart.js';
import { redirect, type PageContext, type PageModule, type PageResult } from '../../page.js';

async function avatarPage(page: PageContext, error: string | null = null): Promise<PageResult> {
  const uploaded = await hasUploadedAvatar(page.ctx, me(page));
  return (
    <SettingsLayout page={page} area="my" section="avatar" title="Avatar" error={error}>
      <p class="avatar-current">
        <Avatar userId={me(page)} version={page.user!.avatarVersion} size={128} />
        <span class="meta">{uploaded ? 'Your uploaded avatar.' : 'Your generated avatar: upload an image to replace it.'}</span>
      </p>
      <PostForm page={page} action="/~my/avatar" class="settings-form" label="Upload avatar" enctype="multipart/form-data">
        <p class="field">
          <label for="field-avatar">Image (JPEG, PNG, WebP or GIF, at most 5 MiB)</label>
          <input id="field-avatar" name="avatar" type="file" accept="image/jpeg,image/png,image/webp,image/gif" required />
        </p>
        <p>
          <button type="submit" class="primary">
            Upload avatar
          </button>
        </p>
      </PostForm>
      {uploaded && (
        <PostForm page={page} action="/~my/avatar/delete" label="Delete avatar">
          <p>
            <button type="submit">Delete uploaded avatar</button>
          </p>
        </PostForm>
      )}
    </SettingsLayout>
  );
}

export const avatarPages: PageModule = {
  pages: [
    settingsRoute('my', 'GET', '/avatar', (page) => avatarPage(page)),
    settingsPost(
      'my',
      '/avatar',
      async (page) => {
        const [file] = uploadedFiles(page.request);
        await uploadAvatar(page.ctx, me(page), file?.content ?? Buffer.alloc(0));
        return redirect('/~my/avatar');
      },
      (page, message) => avatarPage(page, message),
    ),
    settingsPost(
      'my',
      '/avatar/delete',
      async (page) => {
        await deleteAvatar(page.ctx, me(page));
        return redirect('/~my/avatar');
      },
      (page, message) => avatarPage(page, message),
    ),
  ],
};
