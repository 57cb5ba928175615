/** Every page module of the web UI, registered in this order by src/web/app.tsx. */
import type { PageModule } from '../page.js';
import { administrationPages } from './administration/index.js';
import { archivePages } from './archives.js';
import { buildPages } from './builds/index.js';
import { codeSearchPages } from './code-search.js';
import { commitPages } from './commits.js';
import { comparePages } from './compare.js';
import { dashboardPages } from './dashboard.js';
import { diffLayoutPages } from './diff-layout.js';
import { editPages } from './edit/index.js';
import { filesPages } from './files.js';
import { inboxPages } from './inbox.js';
import { issuePages } from './issues/index.js';
import { loginPages } from './login.js';
import { twoFactorSignInPages } from './two-factor-sign-in.js';
import { markdownPreviewPages } from './markdown-preview.js';
import { personalSettingsPages } from './my/index.js';
import { newProjectPages } from './new-project.js';
import { projectHomePages } from './project-home.js';
import { projectListPages } from './projects.js';
import { pullRequestPages } from './pulls/index.js';
import { refPages } from './refs.js';
import { savedQueryPages } from './saved-queries.js';
import { searchPages } from './search.js';
import { settingsPages } from './settings/index.js';
import { ssoPages } from './sso.js';
import { userPages } from './users/index.js';

export const pageModules: PageModule[] = [
  loginPages,
  twoFactorSignInPages,
  ssoPages,
  dashboardPages,
  projectListPages,
  projectHomePages,
  filesPages,
  archivePages,
  editPages,
  commitPages,
  refPages,
  comparePages,
  diffLayoutPages,
  pullRequestPages,
  buildPages,
  issuePages,
  markdownPreviewPages,
  savedQueryPages,
  searchPages,
  codeSearchPages,
  newProjectPages,
  settingsPages,
  administrationPages,
  personalSettingsPages,
  inboxPages,
  userPages,
];
