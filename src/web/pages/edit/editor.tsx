/**
 * The file editor (docs/compatibility.md#editing-files-in-the-browser): `/<project>/~edit/<branch>/<path>` (change a
 * text file's content, or rename it), `~new/<branch>/<dir>` (a new file), `~upload/<branch>/<dir>`
 * (files sent as `multipart/form-data`) and `~delete/<branch>/<path>`. Each commits through the
 * files API's function ({@link commitFiles}: write code, branch and file protections with their
 * messages, compare-and-swap) on the branch, or on a new branch from which a pull request to the
 * branch is then opened. The forms carry the commit they were shown at (`base`): when the branch
 * moved since and one of the paths changed, the commit is refused and the form shown again with
 * the visitor's text; when none changed, the commit goes on top of the new head.
 */
import type { VNode } from 'preact';
import { deny } from '../../../domain/actor.js';
import { getPullRequest, openPullRequest } from '../../../domain/pulls/index.js';
import { branchPathAt, browseAt, commitFiles, type FileWrite, trimSlashes } from '../../../domain/repositories/index.js';
import { BadRequest } from '../../../errors.js';
import { codeUrl } from '../../components/code.js';
import { Field, PostForm } from '../../components/forms.js';
import { Flash } from '../../components/flash.js';
import { ProjectLayout } from '../../components/project-layout.js';
import { uploadedFiles } from '../../multipart.js';
import { redirect, submitForm, type PageResult, type ProjectPageContext } from '../../page.js';
import { pullUrl } from '../pulls/shared.js';
import { type EditKind, editUrl } from './links.js';

/** Where and how a form's commit goes: its message, the branch or a new one, the commit the form was shown at. */
interface CommitChoice {
  message: string;
  target: 'branch' | 'new';
  newBranch: string;
  base: string;
}

/** What a form shows: the commit choice, and for the text forms the path and content. */
interface FormValues extends CommitChoice {
  path: string;
  content: string;
  /** Whether the file's lines end with CRLF (kept when saving). */
  crlf: boolean;
}

/** Pages of one kind: what they say and how they look. */
const KINDS: Record<EditKind, { heading: string; button: string }> = {
  edit: { heading: 'Edit file', button: 'Commit changes' },
  new: { heading: 'New file', button: 'Commit new file' },
  upload: { heading: 'Upload files', button: 'Commit files' },
  delete: { heading: 'Delete file', button: 'Delete file' },
};

function requireWriter(page: ProjectPageContext): void {
  if (!page.permissions.writeCode) deny(page.ctx.actor, 'Not authorized to change the code of this project');
}

/** The first `<user>-patch-<n>` not naming a branch. */
function freeBranchName(page: ProjectPageContext, branches: readonly string[]): string {
  const taken = new Set(branches);
  let n = 1;
  while (taken.has(`${page.user?.name ?? 'user'}-patch-${n}`)) n++;
  return `${page.user?.name ?? 'user'}-patch-${n}`;
}

/** The message, target branch and new branch name of a commit. */
function CommitFields({ branch, values }: { branch: string; values: CommitChoice }) {
  return (
    <>
      <input type="hidden" name="base" value={values.base} />
      <p class="field">
        <label for="field-message">Commit message</label>
        <textarea id="field-message" name="message" rows={3} required>
          {values.message}
        </textarea>
      </p>
      <fieldset class="commit-target">
        <legend>Commit to</legend>
        <p class="check">
          <input type="radio" id="target-branch" name="target" value="branch" checked={values.target !== 'new'} />
          <label for="target-branch">
            the <code>{branch}</code> branch
          </label>
        </p>
        <p class="check">
          <input type="radio" id="target-new" name="target" value="new" checked={values.target === 'new'} />
          <label for="target-new">a new branch, and open a pull request</label>
        </p>
        <Field name="newBranch" label="New branch name" value={values.newBranch} />
      </fieldset>
    </>
  );
}

/**
 * The editor page of `kind` for `path` on `branch`, with the visitor's values and a refusal's
 * message; `head`, when the branch has moved past the form's base, links to what changed.
 */
function editorPage(
  page: ProjectPageContext,
  kind: EditKind,
  branch: string,
  path: string,
  values: FormValues,
  error: string | null = null,
  head: string | null = null,
): VNode {
  const { heading, button } = KINDS[kind];
  const action = editUrl(page.project.path, kind, branch, path);
  const textForm = kind === 'edit' || kind === 'new';
  return (
    <ProjectLayout page={page} tab="code" title={`${heading}: ${path || '/'} on ${branch}`}>
      <h1>{heading}</h1>
      <p class="meta">
        {kind === 'new' || kind === 'upload' ? 'In ' : ''}
        <a href={codeUrl(page.project.path, 'files', branch, path)}>
          <code>{path || '/'}</code>
        </a>
        {' on '}
        <code>{branch}</code>
      </p>
      <Flash error={error} />
      {error && head && values.base && head !== values.base && (
        <p class="meta">
          <code>{branch}</code> has moved since this form was shown:{' '}
          <a href={`/${page.project.path}/~compare?${new URLSearchParams({ left: values.base, right: head })}`}>see what changed</a>.
        </p>
      )}
      <PostForm page={page} action={action} class="file-editor" label={heading} enctype={kind === 'upload' ? 'multipart/form-data' : undefined}>
        {textForm && (
          <>
            <Field name="path" label="File path" value={values.path} required />
            {values.crlf && <input type="hidden" name="crlf" value="1" />}
            <p class="field">
              <label for="field-content">Content</label>
              {/* the HTML parser drops one newline after <textarea>: a leading one keeps the content's own */}
              <textarea id="field-content" name="content" rows={24} spellcheck={false} wrap="off" class="code-input">
                {`\n${values.content}`}
              </textarea>
            </p>
          </>
        )}
        {kind === 'upload' && (
          <p class="field">
            <label for="field-files">Files</label>
            <input id="field-files" name="files" type="file" multiple required />
          </p>
        )}
        {kind === 'delete' && (
          <p>
            Delete <code>{path}</code> from <code>{branch}</code>?
          </p>
        )}
        <CommitFields branch={branch} values={values} />
        <p>
          <button type="submit" class={kind === 'delete' ? 'danger' : undefined}>
            {button}
          </button>{' '}
          <a href={codeUrl(page.project.path, 'files', branch, path)}>Cancel</a>
        </p>
      </PostForm>
    </ProjectLayout>
  );
}

/** GET: the form of `kind` for the branch and path of the URL, at the branch's head. */
async function showEditor(page: ProjectPageContext, kind: EditKind): Promise<PageResult> {
  requireWriter(page);
  const result = await browseAt(page.ctx, page.project, page.params['*'] ?? '');
  const { at } = result;
  if (!at.ref?.startsWith('refs/heads/')) throw new BadRequest(`Files can be changed on a branch only, not at ${at.revision}`);
  const name = at.path.split('/').pop() ?? '';
  const wantsFile = kind === 'edit' || kind === 'delete';
  if (wantsFile !== (result.kind === 'file')) throw new BadRequest(`Specified path is not a ${wantsFile ? 'file' : 'directory'}: ${at.path}`);
  let content = '';
  if (kind === 'edit' && result.kind === 'file') {
    if (result.binary || result.lfs || result.text === null || result.omittedLines > 0) {
      throw new BadRequest(`${at.path} can not be edited in the browser: it is binary, stored with Git LFS or too large`);
    }
    content = result.text;
  }
  const message = { edit: `Update ${name}`, new: '', upload: 'Upload files', delete: `Delete ${name}` }[kind];
  return editorPage(page, kind, at.revision, at.path, {
    path: kind === 'new' ? (at.path ? `${at.path}/` : '') : at.path,
    content,
    crlf: content.includes('\r\n'),
    message,
    target: 'branch',
    newBranch: freeBranchName(page, result.names.branches),
    base: at.commitHash,
  });
}

/** The submitted form's values; the content's line ends are the file's (CRLF when it had them, else LF). */
function submitted(form: Record<string, string>): FormValues {
  const crlf = form.crlf === '1';
  const lf = (form.content ?? '').replace(/\r\n?/g, '\n');
  return {
    path: (form.path ?? '').trim(),
    content: crlf ? lf.replace(/\n/g, '\r\n') : lf,
    crlf,
    message: (form.message ?? '').replace(/\r\n?/g, '\n'),
    target: form.target === 'new' ? 'new' : 'branch',
    newBranch: (form.newBranch ?? '').trim(),
    base: form.base ?? '',
  };
}

/** The file changes a submitted form of `kind` asks for, `path` being the URL's path. */
function changesOf(page: ProjectPageContext, kind: EditKind, path: string, values: FormValues): FileWrite[] {
  if (kind === 'delete') return [{ path, content: null }];
  if (kind === 'upload') {
    const files = uploadedFiles(page.request);
    if (files.length === 0) throw new BadRequest('Choose at least one file to upload');
    // a browser sends the file's name alone; a directory part some send is dropped
    return files.map((file) => ({ path: [path, file.name.split(/[/\\]/).pop() ?? ''].filter(Boolean).join('/'), content: file.content }));
  }
  if (!values.path) throw new BadRequest('File path is required');
  const content = Buffer.from(values.content, 'utf8');
  if (kind === 'new') return [{ path: values.path, content, create: true }];
  return values.path === path
    ? [{ path, content }]
    : [
        { path, content: null },
        { path: values.path, content, create: true },
      ];
}

/** Where a done commit on the branch leads: the file, or the directory of a deleted one or of uploads. */
function doneUrl(page: ProjectPageContext, kind: EditKind, branch: string, path: string, values: FormValues): string {
  if (kind === 'delete') return codeUrl(page.project.path, 'files', branch, path.split('/').slice(0, -1).join('/'));
  if (kind === 'upload') return codeUrl(page.project.path, 'files', branch, path);
  return codeUrl(page.project.path, 'files', branch, values.path);
}

/**
 * POST: commits what the form of `kind` asks for, then goes to the result (the file, its
 * directory, or the pull request opened from the new branch); a refusal shows the form again
 * with the visitor's values and the domain's message.
 */
async function saveEditor(page: ProjectPageContext, kind: EditKind): Promise<PageResult> {
  const values = submitted(page.form);
  let where = { branch: '', head: '', path: trimmedTail(page) };
  return submitForm(
    page,
    async () => {
      where = await branchPathAt(page.ctx, page.project.id, page.params['*'] ?? '');
      if (values.target === 'new' && !values.newBranch) throw new BadRequest('New branch name is required');
      const newBranch = values.target === 'new' ? values.newBranch : undefined;
      await commitFiles(page.ctx, page.project.id, {
        branch: where.branch,
        commitMessage: values.message,
        changes: changesOf(page, kind, where.path, values),
        baseCommit: values.base || undefined,
        newBranch,
      });
      if (newBranch === undefined) return null;
      const [title, ...body] = values.message.trim().split('\n');
      return openPullRequest(page.ctx, {
        targetProjectId: page.project.id,
        targetBranch: where.branch,
        sourceProjectId: page.project.id,
        sourceBranch: newBranch,
        title: title.trim(),
        description: body.join('\n').trim() || null,
      });
    },
    async (requestId) =>
      redirect(
        requestId === null
          ? doneUrl(page, kind, where.branch, where.path, values)
          : pullUrl(page.project.path, (await getPullRequest(page.ctx, requestId)).number),
      ),
    (message) => editorPage(page, kind, where.branch || where.path, where.branch ? where.path : '', values, message, where.head || null),
  );
}

/** The URL's branch and path as written, for a form refused before the branch was read. */
function trimmedTail(page: ProjectPageContext): string {
  return trimSlashes(page.params['*'] ?? '');
}

/** The GET and POST routes of the editor page of `kind`. */
export function editorRoutes(kind: EditKind) {
  return [
    { method: 'GET' as const, path: `/~${kind}/*`, access: 'user' as const, handler: (page: ProjectPageContext) => showEditor(page, kind) },
    { method: 'POST' as const, path: `/~${kind}/*`, access: 'user' as const, handler: (page: ProjectPageContext) => saveEditor(page, kind) },
  ];
}
