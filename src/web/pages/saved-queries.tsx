/**
 * `POST /~saved-queries`: the forms of `<SavedQueries>` (save the current query under a name,
 * delete, watch, unwatch a saved query), through the personalization functions the API uses;
 * answers with a redirect back to the list page.
 */
import { deleteSavedQuery, type SavedQueryKind, saveQuery, watchSavedQuery } from '../../domain/personalizations/index.js';
import { BadRequest } from '../../errors.js';
import { redirect, safeRedirect, type PageModule } from '../page.js';

const KINDS: readonly SavedQueryKind[] = ['project', 'issue', 'pullRequest', 'build', 'commit', 'codeComment'];

export const savedQueryPages: PageModule = {
  pages: [
    {
      method: 'POST',
      path: '/~saved-queries',
      access: 'user',
      handler: async (page) => {
        const { op, kind, project, name = '', query = '' } = page.form;
        if (!KINDS.includes(kind as SavedQueryKind)) throw new BadRequest(`Unknown query kind: ${kind ?? ''}`);
        if (project && !/^\d+$/.test(project)) throw new BadRequest(`Invalid project id: ${project}`);
        const projectId = project ? Number(project) : null;
        const back = safeRedirect(page.form.return);
        const queryKind = kind as SavedQueryKind;
        switch (op) {
          case 'save':
            await saveQuery(page.ctx, queryKind, projectId, name, query);
            return redirect(query.trim() ? `${back}?${new URLSearchParams({ query })}` : back);
          case 'delete':
            await deleteSavedQuery(page.ctx, queryKind, projectId, name);
            return redirect(back);
          case 'watch':
          case 'unwatch':
            await watchSavedQuery(page.ctx, queryKind, projectId, name, op === 'watch');
            return redirect(back);
          default:
            throw new BadRequest(`Unknown operation: ${op ?? ''}`);
        }
      },
    },
  ],
};
