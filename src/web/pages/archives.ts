/**
 * `/~downloads/projects/<projectId>/archives?revision=<rev>&format=zip|tgz`: the archive of a
 * revision's tree, at OneDev 8.6's URL (its ArchiveResource), so OneDev's links keep working
 * (docs/compatibility.md#gitloom-differs-code-browsing). Read code as the files page; the
 * visitor signed in by session, Basic/Bearer credentials or anonymous (per anonymous access).
 * Errors are problem+json (tools fetch archives): 400 for a missing or bad parameter or a
 * revision starting with `-`, 404 for a project the caller cannot see or an unknown revision.
 *
 * The body is `git archive`'s output piped as git writes it (never buffered whole), or the archive
 * kept from an earlier download of the same commit; a client that disconnects ends git.
 */
import { archiveAt } from '../../domain/repositories/index.js';
import { idParam } from '../components/settings.js';
import { rawResponse, type PageModule } from '../page.js';

export const archivePages: PageModule = {
  pages: [
    {
      method: 'GET',
      path: '/~downloads/projects/:projectId/archives',
      errors: 'problem',
      handler: async (page) => {
        const archive = await archiveAt(page.ctx, idParam(page, 'projectId'), page.query.revision ?? '', page.query.format ?? '');
        const client = new AbortController();
        page.reply.raw.once('close', () => client.abort());
        const body = await archive.open(client.signal, (error) => page.request.log.warn({ err: error }, 'archive not kept'));
        return rawResponse(archive.contentType, body, {
          'content-disposition': archive.contentDisposition,
          'cache-control': 'private, no-cache',
        });
      },
    },
  ],
};
