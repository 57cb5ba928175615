/**
 * The pull request pages (docs/compatibility.md#gitloom-differs-web-ui): `/~pulls`, `/<project>/~pulls`, `/<project>/~pulls/new`,
 * `/<project>/~pulls/<number>` with its actions, its `/changes` tab with inline code comments and
 * its `/code-comments` list and its `/conflicts` resolution page.
 */
import { conversationPages, type PageModule } from '../../page.js';
import { changesRoutes } from './changes.js';
import { codeCommentList } from './code-comments.js';
import { conflictRoutes } from './conflicts.js';
import { detailRoutes } from './detail.js';
import { allPullList, projectPullList } from './list.js';
import { newPullForm, openPull } from './new.js';

export const pullRequestPages: PageModule = conversationPages('pulls', { all: allPullList, project: projectPullList, newForm: newPullForm, create: openPull }, [
  ...detailRoutes,
  ...changesRoutes,
  ...conflictRoutes,
  { method: 'GET', path: '/~pulls/:number/code-comments', handler: codeCommentList },
]);
