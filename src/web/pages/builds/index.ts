/**
 * The build pages (docs/compatibility.md#gitloom-differs-web-ui): `/~builds`, `/<project>/~builds` with the "Run job" control,
 * and `/<project>/~builds/<number>` with its live log, artifact downloads, cancel and rebuild.
 */
import type { PageModule } from '../../page.js';
import { buildListPage, projectBuildListPages } from './build-list.js';
import { buildPageRoutes } from './build-page.js';

export const buildPages: PageModule = {
  pages: [buildListPage],
  projectPages: [...projectBuildListPages, ...buildPageRoutes],
};
