/**
 * The pull request pages (docs/compatibility.md#gitloom-differs-web-ui): `/~pulls`, `/<project>/~pulls`, `/<project>/~pulls/new`,
 * `/<project>/~pulls/<number>` with its actions, its `/changes` tab with inline code comments and
 * its `/code-comments` list.
 */
import type { PageModule } from '../../page.js';
import { changesRoutes } from './changes.js';
import { codeCommentList } from './code-comments.js';
import { detailRoutes } from './detail.js';
import { allPullList, projectPullList } from './list.js';
import { newPullForm, openPull } from './new.js';

export const pullRequestPages: PageModule = {
  pages: [{ method: 'GET', path: '/~pulls', handler: allPullList }],
  projectPages: [
    { method: 'GET', path: '/~pulls', handler: projectPullList },
    { method: 'GET', path: '/~pulls/new', access: 'user', handler: newPullForm },
    { method: 'POST', path: '/~pulls/new', access: 'user', handler: openPull },
    ...detailRoutes,
    ...changesRoutes,
    { method: 'GET', path: '/~pulls/:number/code-comments', handler: codeCommentList },
  ],
};
