/** The project settings pages, `/<project>/~settings/…`, for those who may manage the project. */
import type { PageModule } from '../../page.js';
import { auditLogSettingsPages } from './audit-log.js';
import { buildSettingsPages } from './build.js';
import { generalSettingsPages } from './general.js';
import { labelMilestoneSettingsPages } from './labels-milestones.js';
import { memberSettingsPages } from './members.js';
import { mirrorSettingsPages } from './mirrors.js';
import { protectionSettingsPages } from './protections.js';
import { webhookSettingsPages } from './webhooks.js';

export const settingsPages: PageModule = {
  projectPages: [
    ...generalSettingsPages,
    ...memberSettingsPages,
    ...protectionSettingsPages,
    ...buildSettingsPages,
    ...labelMilestoneSettingsPages,
    ...webhookSettingsPages,
    ...mirrorSettingsPages,
    ...auditLogSettingsPages,
  ],
};
