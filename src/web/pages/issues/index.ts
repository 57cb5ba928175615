/**
 * The issue pages (docs/compatibility.md#gitloom-differs-web-ui): `/~issues`, `/<project>/~issues`,
 * `/<project>/~issues/new` and `/<project>/~issues/<number>` with its actions. Every read and
 * change goes through the domain functions the `/~api/issues…` routes call, so permissions and
 * messages are the API's.
 */
import { conversationPages, type PageModule } from '../../page.js';
import { issueDetailRoutes } from './detail.js';
import { allIssueList, projectIssueList } from './list.js';
import { newIssueForm, openIssueFromForm } from './new.js';

export const issuePages: PageModule = conversationPages(
  'issues',
  { all: allIssueList, project: projectIssueList, newForm: newIssueForm, create: openIssueFromForm },
  issueDetailRoutes,
);
