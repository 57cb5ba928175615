/** `POST /~markdown-preview`: renders the Markdown of a comment form for its preview (preview.js, or the Preview button without JavaScript). */
import { Layout } from '../components/layout.js';
import { Markdown } from '../components/markdown.js';
import type { PageModule } from '../page.js';

/** A project path as references carry it (the domain's PROJECT_PATH characters). */
const PROJECT_PATH = /^\w(?:[\w\-/.]*\w)?$/;

export const markdownPreviewPages: PageModule = {
  pages: [
    {
      method: 'POST',
      path: '/~markdown-preview',
      access: 'user',
      handler: async (page) => {
        const project = page.form.project && PROJECT_PATH.test(page.form.project) ? page.form.project : undefined;
        const text = page.form.content ?? page.form.description ?? page.form.text ?? '';
        return (
          <Layout page={page} title="Preview">
            <h1>Preview</h1>
            <p class="meta">Go back to edit and submit the text.</p>
            <Markdown text={text} project={project} />
          </Layout>
        );
      },
    },
  ],
};
