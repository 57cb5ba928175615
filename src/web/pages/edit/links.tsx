/**
 * The links of the file and tree views to the file editor (docs/compatibility.md#editing-files-in-the-browser),
 * shown to users who may write the project's code when the revision shown is a branch.
 */
import type { ProjectPageContext } from '../../page.js';
import { encodePath } from '../../components/code.js';

/** The pages of the file editor. */
export type EditKind = 'edit' | 'new' | 'upload' | 'delete';

/** The URL of an editor page: `/<project>/~<kind>/<branch>[/<path>]`. */
export function editUrl(projectPath: string, kind: EditKind, branch: string, path = ''): string {
  return `/${projectPath}/~${kind}/${encodePath(branch)}${path ? `/${encodePath(path)}` : ''}`;
}

/**
 * "Edit" and "Delete" for a file, "New file" and "Upload files" for a directory; nothing for a
 * visitor who cannot write code or a revision that is not a branch (a tag, a commit).
 */
export function EditLinks({ page, at, kind }: { page: ProjectPageContext; at: { revision: string; ref: string | null; path: string }; kind: 'file' | 'tree' }) {
  if (!page.user || !page.permissions.writeCode || !at.ref?.startsWith('refs/heads/')) return null;
  const url = (edit: EditKind) => editUrl(page.project.path, edit, at.revision, at.path);
  return (
    <p class="edit-links">
      {kind === 'file' ? (
        <>
          <a href={url('edit')}>Edit</a>
          <a href={url('delete')}>Delete</a>
        </>
      ) : (
        <>
          <a href={url('new')}>New file</a>
          <a href={url('upload')}>Upload files</a>
        </>
      )}
    </p>
  );
}
