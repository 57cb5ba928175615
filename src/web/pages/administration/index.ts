/** The administration pages (`/~administration/…`), for administrators only. */
import type { PageModule } from '../../page.js';
import { agentAdministrationPages } from './agents.js';
import { auditLogAdministrationPages } from './audit-log.js';
import { groupAdministrationPages } from './groups.js';
import { jobExecutorAdministrationPages } from './job-executors.js';
import { roleAdministrationPages } from './roles.js';
import { settingAdministrationPages } from './settings.js';
import { singleSignOnAdministrationPages } from './single-sign-on.js';
import { sshAdministrationPages } from './ssh.js';
import { userAdministrationPages } from './users.js';

export const administrationPages: PageModule = {
  pages: [
    userAdministrationPages,
    groupAdministrationPages,
    roleAdministrationPages,
    settingAdministrationPages,
    singleSignOnAdministrationPages,
    jobExecutorAdministrationPages,
    agentAdministrationPages,
    sshAdministrationPages,
    auditLogAdministrationPages,
  ].flatMap((m) => m.pages ?? []),
};
