/**
 * `/<project>`: the README of the default branch, its top-level tree (each entry with its last
 * commit), the clone URL with a copy
 * button, a fork link and the branch/tag counts; a fork names its origin; an empty repository
 * shows how to push to it.
 */
import { cloneUrls, forkOrigin } from '../../domain/projects/index.js';
import { lastCommitsAt, repositoryOverview } from '../../domain/repositories/index.js';
import { ProjectLayout } from '../components/project-layout.js';
import { Readme } from '../components/readme.js';
import { LAST_COMMITS_WAIT_MS, pendingLastCommits, TreeTable } from '../components/tree.js';
import type { PageModule } from '../page.js';
import { finderUrl } from './finder.js';

export const projectHomePages: PageModule = {
  projectPages: [
    {
      method: 'GET',
      path: '/',
      handler: async (page) => {
        const { project } = page;
        const clone = cloneUrls(page.ctx, project).http;
        const [overview, origin] = await Promise.all([page.permissions.readCode ? repositoryOverview(page.ctx, project) : null, forkOrigin(page.ctx, project)]);
        const base = `/${project.path}`;
        const wait = page.query['last-commits'] === 'wait' ? Infinity : LAST_COMMITS_WAIT_MS;
        const lastCommits = overview?.commitHash
          ? await lastCommitsAt(
              page.ctx,
              project,
              overview.commitHash,
              '',
              overview.entries.map((e) => e.name),
              wait,
            )
          : null;
        return (
          <ProjectLayout page={page} tab="code" scripts={['copy.js', 'tree.js', 'keys.js']}>
            <h1>{project.name}</h1>
            {origin && (
              <p class="meta">
                forked from <a href={`/${origin.path}`}>{origin.path}</a>
              </p>
            )}
            {project.description && <p class="lead">{project.description}</p>}
            {overview && (
              <>
                <div class="clone">
                  <label for="clone-url">Clone</label>
                  <input id="clone-url" readonly value={clone} />
                  <button type="button" data-copy="#clone-url">
                    Copy
                  </button>
                  {page.user && <a href={`${base}/~fork`}>Fork</a>}
                </div>
                <p class="meta">
                  <a href={`${base}/~branches`}>{`${overview.branchCount} ${overview.branchCount === 1 ? 'branch' : 'branches'}`}</a>
                  {' · '}
                  <a href={`${base}/~tags`}>{`${overview.tagCount} ${overview.tagCount === 1 ? 'tag' : 'tags'}`}</a>
                  {overview.defaultBranch && (
                    <>
                      {` · default branch ${overview.defaultBranch} · `}
                      <a href={finderUrl(project.path, overview.defaultBranch)} data-key="t" aria-keyshortcuts="t" title="Go to file (t)">
                        Go to file
                      </a>
                    </>
                  )}
                </p>
                {overview.defaultBranch === null ? (
                  <section aria-labelledby="empty">
                    <h2 id="empty">This repository is empty</h2>
                    <p>Push an existing repository from the command line:</p>
                    <pre>
                      <code>{`git remote add origin ${clone}\ngit push -u origin main`}</code>
                    </pre>
                  </section>
                ) : (
                  <>
                    <section aria-labelledby="files">
                      <h2 id="files">Files</h2>
                      <TreeTable
                        projectPath={project.path}
                        revision={overview.defaultBranch}
                        dir=""
                        entries={overview.entries}
                        lastCommits={lastCommits}
                        pending={pendingLastCommits(project.path, base, overview.commitHash!, '')}
                      />
                    </section>
                    {overview.readme && <Readme readme={overview.readme} projectPath={project.path} revision={overview.defaultBranch!} path="" />}
                  </>
                )}
              </>
            )}
          </ProjectLayout>
        );
      },
    },
  ],
};
