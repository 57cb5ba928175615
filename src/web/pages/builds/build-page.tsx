/**
 * `/<project>/~builds/<number>` (docs/compatibility.md#gitloom-differs-web-ui): a build's status, job, ref, commit, params,
 * timing, its log — followed live by the client module build-log.js while the build runs; the
 * log so far and a refresh link without JavaScript —, its artifacts with download links, and
 * cancel/rebuild buttons for callers with RunJob. Also the raw routes of the page:
 * `…/log` (the log as text; `?follow=true&from=<byte>` streams until the build ends, as
 * `GET /~api/builds/{id}/log?follow=true`) and `…/artifacts/<path>` (a download, with the API's
 * permission check and the API's headers: attachment unless a safe type, `nosniff`, a sandbox CSP
 * — src/plugins/user-content.ts).
 */
import { markThreadRead } from '../../../domain/notifications/index.js';
import { Readable } from 'node:stream';
import { Fragment } from 'preact';
import {
  buildByNumber,
  type BuildDetails,
  buildLog,
  buildLogTail,
  cancelBuild,
  downloadArtifact,
  listArtifactFiles,
  rebuild,
} from '../../../domain/builds/index.js';
import { NotFound } from '../../../errors.js';
import { userContentHeaders } from '../../../plugins/user-content.js';
import { PostForm } from '../../components/forms.js';
import { Markdown } from '../../components/markdown.js';
import { ProjectLayout } from '../../components/project-layout.js';
import { rawResponse, redirect, type ProjectPageContext, type ProjectPageRoute } from '../../page.js';
import { DateTime, duration, isFinished, refOf, runTime, StatusBadge } from './build-parts.js';
import { REBUILD_REASON } from './build-list.js';
import { formatBytes } from '../../components/sizes.js';

/** The log shown in the page: its last MiB (the rest through the full-log link). */
const LOG_TAIL_BYTES = 1024 * 1024;
/** Artifact files listed on the page. */
const ARTIFACT_LIMIT = 500;

/** The build of the page's `:number`; a number that is not one is 404 like a missing build. */
async function pageBuild(page: ProjectPageContext): Promise<BuildDetails> {
  const text = page.params.number ?? '';
  if (!/^\d{1,15}$/.test(text)) throw new NotFound(`Build not found: ${page.project.path}#${text}`);
  return buildByNumber(page.ctx, page.project, Number(text));
}

const size = formatBytes;

/** An artifact path as a URL path (each segment encoded). */
const artifactHref = (base: string, path: string) => `${base}/artifacts/${path.split('/').map(encodeURIComponent).join('/')}`;

/** GET `/<project>/~builds/<number>`: the build's facts, parameters, log tail and artifacts. */
async function buildPage(page: ProjectPageContext) {
  const details = await pageBuild(page);
  const { build, job } = details;
  // opening the build reads its notification
  await markThreadRead(page.ctx, 'Build', build.id);
  const base = `/${page.project.path}/~builds/${build.number}`;
  const [log, artifacts] = await Promise.all([
    job.accessLog ? buildLogTail(page.ctx, build.id, LOG_TAIL_BYTES) : null,
    listArtifactFiles(page.ctx, build.id, ARTIFACT_LIMIT),
  ]);
  const view: BuildView = { page, details, base, finished: isFinished(build.status) };
  return (
    <ProjectLayout page={page} tab="builds" title={`#${build.number} ${build.jobName} · Builds`} scripts={view.finished ? [] : ['build-log.js']}>
      <BuildHead view={view} />
      <BuildFacts view={view} />
      {build.description && (
        <section aria-labelledby="description">
          <h2 id="description">Description</h2>
          <Markdown text={build.description} />
        </section>
      )}
      <BuildParams view={view} />
      {log && <BuildLog view={view} log={log} />}
      <BuildArtifacts view={view} artifacts={artifacts} />
    </ProjectLayout>
  );
}

/** What the parts of a build page share. */
interface BuildView {
  page: ProjectPageContext;
  details: BuildDetails;
  /** The build page's path. */
  base: string;
  finished: boolean;
}

/** The title, status and the cancel or rebuild action. */
function BuildHead({ view }: { view: BuildView }) {
  const { page, base, finished } = view;
  const { build, job } = view.details;
  return (
    <div class="build-head">
      <h1>{`Build #${build.number} · ${build.jobName}`}</h1>
      <p class="build-status">
        <StatusBadge status={build.status} />
        {build.paused === 1 && <span class="meta"> (paused)</span>}
      </p>
      {job.runJob && (
        <div class="actions">
          {!finished && (
            <PostForm page={page} action={`${base}/cancel`} label="Cancel build">
              <button type="submit" class="danger">
                Cancel build
              </button>
            </PostForm>
          )}
          {finished && (
            <PostForm page={page} action={`${base}/rebuild`} label="Rebuild">
              <button type="submit">Rebuild</button>
            </PostForm>
          )}
        </div>
      )}
    </div>
  );
}

/** Job, ref, commit, version, and who submitted, waited, ran and cancelled it when, and the agent it ran on. */
function BuildFacts({ view }: { view: BuildView }) {
  const { page, finished, details } = view;
  const { build } = details;
  const ref = refOf(build, page.project.path);
  const name = (id: number) => details.userNames.get(id) ?? `user ${id}`;
  const ran = runTime(build, page.ctx.now());
  return (
    <dl class="facts">
      <dt>Job</dt>
      <dd>{build.jobName}</dd>
      <dt>Ref</dt>
      <dd>{ref.href ? <a href={ref.href}>{ref.label}</a> : ref.label}</dd>
      <dt>Commit</dt>
      <dd>
        <a class="hash" href={`/${page.project.path}/~commits/${build.commitHash}`}>
          {build.commitHash}
        </a>
      </dd>
      {build.version && (
        <>
          <dt>Version</dt>
          <dd>{build.version}</dd>
        </>
      )}
      <dt>Submitted</dt>
      <dd>
        <DateTime ms={build.submitDate} />
        {` by ${name(build.submitterId)}: ${build.submitReason}`}
      </dd>
      {build.runningDate !== null && (
        <>
          <dt>Waited</dt>
          <dd>{duration(build.runningDate - build.submitDate)}</dd>
        </>
      )}
      {ran && (
        <>
          <dt>{finished ? 'Ran' : 'Running for'}</dt>
          <dd>{ran}</dd>
        </>
      )}
      {build.finishDate !== null && (
        <>
          <dt>Finished</dt>
          <dd>
            <DateTime ms={build.finishDate} />
          </dd>
        </>
      )}
      {details.agentName !== null && (
        <>
          <dt>Agent</dt>
          <dd>{page.ctx.actor.isAdmin ? <a href={`/~administration/agents/${build.agentId}`}>{details.agentName}</a> : details.agentName}</dd>
        </>
      )}
      {build.cancellerId !== null && (
        <>
          <dt>Cancelled by</dt>
          <dd>{name(build.cancellerId)}</dd>
        </>
      )}
    </dl>
  );
}

/** The build's parameters, when it has any. */
function BuildParams({ view }: { view: BuildView }) {
  const { params } = view.details;
  if (params.length === 0) return null;
  return (
    <section aria-labelledby="params">
      <h2 id="params">Parameters</h2>
      <dl class="facts">
        {params.map((p, i) => (
          <Fragment key={i}>
            <dt>{p.name}</dt>
            <dd>{p.value ?? <span class="meta">(empty)</span>}</dd>
          </Fragment>
        ))}
      </dl>
    </section>
  );
}

/** The log's tail, followed live while the build runs (build-log.js). */
function BuildLog({ view, log }: { view: BuildView; log: NonNullable<Awaited<ReturnType<typeof buildLogTail>>> }) {
  const { base, finished } = view;
  return (
    <section aria-labelledby="log">
      <h2 id="log">Log</h2>
      <p class="meta">
        {log.truncated && 'Earlier lines are left out. '}
        <a href={`${base}/log`}>Full log as text</a>
        {!finished && (
          <span data-live-note>
            {' · The build is running: '}
            <a href={base}>refresh</a>
            {' to see more.'}
          </span>
        )}
      </p>
      <pre
        class="build-log"
        tabindex={0}
        aria-label="Build log"
        data-follow={finished ? undefined : `${base}/log?${new URLSearchParams({ follow: 'true', from: String(log.end) })}`}
      >
        {log.text}
      </pre>
    </section>
  );
}

/** The published artifacts, each a download. */
function BuildArtifacts({ view, artifacts }: { view: BuildView; artifacts: Awaited<ReturnType<typeof listArtifactFiles>> }) {
  return (
    <section aria-labelledby="artifacts">
      <h2 id="artifacts">Artifacts</h2>
      {artifacts.files.length === 0 ? (
        <p class="empty">No artifact.</p>
      ) : (
        <ul class="list">
          {artifacts.files.map((file) => (
            <li key={file.path}>
              <a href={artifactHref(view.base, file.path)} download>
                {file.path}
              </a>
              <span class="meta">{` ${size(file.length)}`}</span>
            </li>
          ))}
        </ul>
      )}
      {artifacts.truncated && <p class="meta">{`Only the first ${ARTIFACT_LIMIT} files are listed.`}</p>}
    </section>
  );
}

/** The build page, its actions and its raw routes. */
export const buildPageRoutes: ProjectPageRoute[] = [
  { method: 'GET', path: '/~builds/:number', handler: buildPage },
  {
    method: 'POST',
    path: '/~builds/:number/cancel',
    handler: async (page) => {
      const { build } = await pageBuild(page);
      await cancelBuild(page.ctx, build.id);
      return redirect(`/${page.project.path}/~builds/${build.number}`);
    },
  },
  {
    method: 'POST',
    path: '/~builds/:number/rebuild',
    handler: async (page) => {
      const { build } = await pageBuild(page);
      await rebuild(page.ctx, build.id, REBUILD_REASON);
      return redirect(`/${page.project.path}/~builds/${build.number}`);
    },
  },
  {
    method: 'GET',
    path: '/~builds/:number/log',
    handler: async (page) => {
      const { build } = await pageBuild(page);
      const from = page.query.from === undefined ? 0 : Number(page.query.from);
      const chunks = await buildLog(page.ctx, build.id, page.query.follow === 'true', from);
      return rawResponse('text/plain; charset=utf-8', Readable.from(chunks));
    },
  },
  {
    method: 'GET',
    path: '/~builds/:number/artifacts/*',
    handler: async (page) => {
      const { build } = await pageBuild(page);
      const path = page.params['*'] ?? '';
      const file = await downloadArtifact(page.ctx, build.id, path, undefined);
      return rawResponse(file.mediaType, file.stream, {
        ...userContentHeaders(path.split('/').pop() || 'artifact', file.mediaType),
        'content-length': String(file.length),
      });
    },
  },
];
