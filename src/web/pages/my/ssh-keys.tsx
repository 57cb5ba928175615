/**
 * `/~my/ssh-keys`: the signed-in user's SSH public keys (type, fingerprint-bearing content,
 * comment), an add form (an OpenSSH public key line, validated and unique as
 * `POST /~api/users/{id}/ssh-keys`) and a delete button per key.
 */
import { addSshKey, deleteSshKey, getSshKey, listSshKeys } from '../../../domain/users/index.js';
import { NotFound } from '../../../errors.js';
import { DateTime } from '../../components/code.js';
import { PostForm, InlineForm } from '../../components/forms.js';
import { TextArea } from '../../components/controls.js';
import { formId, me, settingsPost, settingsRoute, SettingsLayout } from '../../components/settings.js';
import { redirect, type PageContext, type PageModule, type PageResult } from '../../page.js';

async function keysPage(page: PageContext, error: string | null = null): Promise<PageResult> {
  const keys = await listSshKeys(page.ctx, me(page));
  return (
    <SettingsLayout page={page} area="my" section="ssh-keys" title="SSH keys" error={error}>
      {keys.length === 0 ? (
        <p class="empty">No SSH key yet.</p>
      ) : (
        <ul class="list" aria-label="SSH keys">
          {keys.map((key) => {
            const [type, , ...comment] = key.content.split(' ');
            return (
              <li key={key.id} class="row">
                <span>
                  <strong>{comment.join(' ') || type}</strong> <code class="hash">{key.fingerprint}</code>
                  <span class="meta">
                    {` · ${type} · added `}
                    <DateTime date={new Date(key.createdAt)} />
                  </span>
                </span>
                <InlineForm
                  page={page}
                  action="/~my/ssh-keys/delete"
                  label={`Delete key ${key.fingerprint}`}
                  fields={{ id: String(key.id) }}
                  buttonClass="danger"
                  buttonLabel={`Delete SSH key ${comment.join(' ') || key.fingerprint}`}
                >
                  Delete
                </InlineForm>
              </li>
            );
          })}
        </ul>
      )}
      <section aria-labelledby="add-key-heading">
        <h2 id="add-key-heading">Add an SSH key</h2>
        <PostForm page={page} action="/~my/ssh-keys" class="settings-form" label="Add an SSH key">
          <TextArea name="content" label="Public key (the line of your .pub file)" value={error ? page.form.content : undefined} rows={4} required />
          <p>
            <button type="submit" class="primary">
              Add key
            </button>
          </p>
        </PostForm>
      </section>
    </SettingsLayout>
  );
}

export const sshKeyPages: PageModule = {
  pages: [
    settingsRoute('my', 'GET', '/ssh-keys', (page) => keysPage(page)),
    settingsPost(
      'my',
      '/ssh-keys',
      async (page) => {
        await addSshKey(page.ctx, me(page), page.form.content ?? '');
        return redirect('/~my/ssh-keys');
      },
      (page, message) => keysPage(page, message),
    ),
    settingsPost(
      'my',
      '/ssh-keys/delete',
      async (page) => {
        const id = formId(page, 'key');
        // this page changes the signed-in user's keys only, administrators included
        if ((await getSshKey(page.ctx, id)).ownerId !== me(page)) throw new NotFound(`SSH key not found: ${id}`);
        await deleteSshKey(page.ctx, id);
        return redirect('/~my/ssh-keys');
      },
      (page, message) => keysPage(page, message),
    ),
  ],
};
