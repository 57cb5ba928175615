/**
 * Changing code in the browser (docs/compatibility.md#editing-files-in-the-browser): the file editor's pages and
 * the application of suggested changes (docs/compatibility.md#suggested-changes).
 */
import type { PageModule } from '../../page.js';
import { editorRoutes } from './editor.js';
import { applySuggestionsRoute } from './suggestions.js';

/** The editor's GET and POST pages (`~edit`, `~new`, `~upload`, `~delete`) and the suggestions' POST. */
export const editPages: PageModule = {
  projectPages: [...editorRoutes('edit'), ...editorRoutes('new'), ...editorRoutes('upload'), ...editorRoutes('delete'), applySuggestionsRoute],
};
