/**
 * `POST /~diff-layout`: remembers the signed-in user's layout of diffs (`layout=unified|split`,
 * docs/compatibility.md#diff-view), then back to the page the form was on (`back`, a path of
 * this server).
 */
import { setDiffLayout } from '../../domain/diff-views/index.js';
import { redirect, safeRedirect, type PageModule } from '../page.js';

export const diffLayoutPages: PageModule = {
  pages: [
    {
      method: 'POST',
      path: '/~diff-layout',
      access: 'user',
      handler: async (page) => {
        await setDiffLayout(page.ctx, page.form.layout ?? '');
        return redirect(safeRedirect(page.form.back));
      },
    },
  ],
};
