/**
 * `/<project>/~pulls/<number>/conflicts` (docs/compatibility.md#pull-requests-resolving-conflicts):
 * the conflicted files of a request's merge, each conflict region with ours / base / theirs,
 * the choices per region and per file, a text area with the whole resulting file, and "Commit
 * resolution" posting to the same path. Works without JavaScript (region choices apply to an
 * unchanged text area); conflicts.js makes the choices fill the text area as they are made.
 */
import type { VNode } from 'preact';
import { getProjectRow } from '../../../domain/projects/index.js';
import {
  type ConflictFile,
  type ConflictKind,
  type FileResolutionInput,
  pullRequestConflicts,
  type PullRequestConflicts,
  type PullRequestRow,
  resolutionMessage,
  resolveConflicts,
  userNames,
} from '../../../domain/pulls/index.js';
import { TextArea } from '../../components/controls.js';
import { Flash } from '../../components/flash.js';
import { Field, HiddenFields, PostForm } from '../../components/forms.js';
import { ProjectLayout } from '../../components/project-layout.js';
import type { PageResult, ProjectPageContext, ProjectPageRoute } from '../../page.js';
import { pullAction, PullHeader, pullUrl, requestOfPage } from './shared.js';

const KIND_LABELS: Record<ConflictKind, string> = {
  'both-modified': 'changed on both sides',
  'both-added': 'added on both sides',
  'deleted-by-target': 'changed in source, deleted in target',
  'deleted-by-source': 'deleted in source, changed in target',
  'added-by-source': 'only in source',
  'added-by-target': 'only in target',
  'deleted-by-both': 'deleted on both sides',
};

const SIDES_ONLY: Record<NonNullable<ConflictFile['sidesOnly']>, string> = {
  'one-side': '',
  binary: 'A binary file: choose a version.',
  large: 'Too large to merge here: choose a version.',
  encoding: 'Not UTF-8 text: choose a version.',
  symlink: 'A symbolic link: choose a version.',
  submodule: 'A submodule: choose a version.',
  lfs: 'A Git LFS file: choose a version.',
};

/** Lines of context shown around a conflict region. */
const CONTEXT_LINES = 3;

/** What a page shows in a file's inputs: the submitted values after a refusal, else the first ones. */
type Submitted = Record<string, string>;

/** `text` with the newline a `<textarea>` or `<pre>` start would swallow (HTML drops one leading newline). */
const kept = (text: string) => `\n${text}`;

function sizeText(size: number | null): string {
  if (size === null) return '';
  return size < 1024 ? `${size} B` : size < 1024 * 1024 ? `${(size / 1024).toFixed(1)} KiB` : `${(size / 1024 / 1024).toFixed(1)} MiB`;
}

/** A radio with its label; `checked` when it is the submitted or first value. */
function Radio({ name, value, label, checked, id }: { name: string; value: string; label: string; checked: boolean; id: string }) {
  return (
    <label class="choice" for={id}>
      <input type="radio" id={id} name={name} value={value} checked={checked} /> {label}
    </label>
  );
}

/** One version of a conflict region (or its context). */
function Version({ title, text, cls }: { title: string; text: string; cls: string }) {
  return (
    <figure class={`conflict-side ${cls}`}>
      <figcaption>{title}</figcaption>
      {text === '' ? <p class="empty">(nothing)</p> : <pre tabIndex={0}>{kept(text)}</pre>}
    </figure>
  );
}

/** The conflict regions of a text file, each with its context and its choice. */
function Regions({ file, n, view, submitted }: { file: ConflictFile; n: number; view: PullRequestConflicts; submitted: Submitted }) {
  const text = file.text!;
  const regions: VNode[] = [];
  let k = 0;
  text.chunks.forEach((chunk, i) => {
    if (chunk.kind !== 'conflict') return;
    const before =
      text.chunks[i - 1]?.kind === 'clean'
        ? (text.chunks[i - 1] as { text: string }).text
            .split(/(?<=\n)/)
            .slice(-CONTEXT_LINES)
            .join('')
        : '';
    const after =
      text.chunks[i + 1]?.kind === 'clean'
        ? (text.chunks[i + 1] as { text: string }).text
            .split(/(?<=\n)/)
            .slice(0, CONTEXT_LINES)
            .join('')
        : '';
    const open = (['ours', 'theirs'] as const).filter((side) => chunk[side] !== '' && !chunk[side].endsWith('\n'));
    const name = `region-${n}-${k}`;
    const choice = submitted[name] ?? '';
    regions.push(
      <div class="conflict-region" key={k} data-region={k} data-unterminated={open.join(' ')}>
        <h4>{`Conflict ${k + 1} of ${text.regions}`}</h4>
        {before && (
          <pre class="conflict-context" tabIndex={0}>
            {kept(before)}
          </pre>
        )}
        <div class="conflict-sides">
          <Version title={`Ours: ${view.labels.ours}`} text={chunk.ours} cls="ours" />
          <Version title="Base" text={chunk.base} cls="base" />
          <Version title={`Theirs: ${view.labels.theirs}`} text={chunk.theirs} cls="theirs" />
        </div>
        {after && (
          <pre class="conflict-context" tabIndex={0}>
            {kept(after)}
          </pre>
        )}
        <fieldset class="region-choice">
          <legend>{`Keep for conflict ${k + 1}`}</legend>
          <Radio name={name} id={`${name}-ours`} value="ours" label="Ours" checked={choice === 'ours'} />
          <Radio name={name} id={`${name}-theirs`} value="theirs" label="Theirs" checked={choice === 'theirs'} />
          <Radio name={name} id={`${name}-both`} value="both" label="Both (ours, then theirs)" checked={choice === 'both'} />
        </fieldset>
      </div>,
    );
    k++;
  });
  return <>{regions}</>;
}

/** The version of a side for a choice label: what keeping it means. */
function sideLabel(file: ConflictFile, side: 'ours' | 'theirs', branch: string): string {
  const version = file[side];
  if (!version) return file.base ? `Delete it (as ${branch} did)` : `Leave it out (${branch} has no such file)`;
  const size = sizeText(version.size);
  return `Keep the version of ${branch}${size ? ` (${size})` : ''}`;
}

/** One conflicted file: git's messages, the choices and, for text, the regions and the resulting text. */
function FileSection({
  file,
  n,
  view,
  submitted,
  editable,
}: {
  file: ConflictFile;
  n: number;
  view: PullRequestConflicts;
  submitted: Submitted;
  editable: boolean;
}) {
  const id = `file-${n}`;
  const choiceName = `choice-${n}`;
  const choice = submitted[choiceName] ?? (file.text ? 'merge' : '');
  return (
    <section class="conflict-file" id={id} aria-labelledby={`${id}-title`} data-marker-size={file.text?.markerSize}>
      <h3 id={`${id}-title`}>
        <code>{file.path}</code> <span class="badge">{KIND_LABELS[file.kind]}</span>
      </h3>
      {file.messages.length > 0 && (
        <ul class="meta conflict-messages">
          {file.messages.map((m, i) => (
            <li key={i}>{m.text}</li>
          ))}
        </ul>
      )}
      <input type="hidden" name={`path-${n}`} value={file.path} />
      {file.kind === 'deleted-by-both' ? (
        <p>Both sides removed this path: it stays deleted.</p>
      ) : (
        <fieldset class="file-choice" disabled={!editable}>
          <legend>{`Resolution of ${file.path}`}</legend>
          {file.sidesOnly && SIDES_ONLY[file.sidesOnly] && <p class="meta">{SIDES_ONLY[file.sidesOnly]}</p>}
          {file.text && (
            <Radio name={choiceName} id={`${choiceName}-merge`} value="merge" label="Merge: the conflicts below and the text" checked={choice === 'merge'} />
          )}
          <Radio name={choiceName} id={`${choiceName}-ours`} value="ours" label={sideLabel(file, 'ours', view.labels.ours)} checked={choice === 'ours'} />
          <Radio
            name={choiceName}
            id={`${choiceName}-theirs`}
            value="theirs"
            label={sideLabel(file, 'theirs', view.labels.theirs)}
            checked={choice === 'theirs'}
          />
          {file.text && (
            <div class="text-merge">
              {file.text.regions === 0 && <p class="meta">The versions merge line by line without a conflict; check the text.</p>}
              <Regions file={file} n={n} view={view} submitted={submitted} />
              <p class="field">
                <label for={`content-${n}`}>{`Result: ${file.path}`}</label>
                <textarea
                  id={`content-${n}`}
                  name={`content-${n}`}
                  class="conflict-result"
                  rows={Math.min(30, file.text.unresolved.split('\n').length + 1)}
                  spellcheck={false}
                >
                  {kept(submitted[`content-${n}`] ?? file.text.unresolved)}
                </textarea>
              </p>
            </div>
          )}
        </fieldset>
      )}
    </section>
  );
}

/** Where the resolution goes, the commit message and the button. */
function CommitFields({ page, pr, view }: { page: ProjectPageContext; pr: PullRequestRow; view: PullRequestConflicts }) {
  return (
    <section class="conflict-commit" aria-labelledby="commit-resolution">
      <h2 id="commit-resolution">Commit resolution</h2>
      {view.destination === 'source' ? (
        <>
          <p>
            {'Commits a merge of '}
            <code>{pr.targetBranch}</code>
            {' into '}
            <code>{pr.sourceBranch}</code>
            {' onto the source branch; the pull request then merges without conflicts.'}
          </p>
          {view.newBranchAllowed && (
            <details open={Boolean(page.form.newBranch)}>
              <summary>Commit to a new branch instead</summary>
              <Field name="newBranch" label="New branch name (leave empty for the source branch)" value={page.form.newBranch} />
            </details>
          )}
        </>
      ) : (
        <>
          <p>You cannot write the source branch: the resolution is committed to a new branch of this project, from which a pull request can be opened.</p>
          <Field name="newBranch" label="New branch name" value={page.form.newBranch} required />
        </>
      )}
      <TextArea name="message" label="Commit message" value={page.form.message ?? resolutionMessage(pr)} rows={3} />
      <p>
        <button type="submit" class="primary">
          Commit resolution
        </button>
      </p>
    </section>
  );
}

/**
 * Renders the conflicts page of `pr`: with a refusal's message, the values submitted with it
 * (kept when the heads are still the ones shown) and a notice.
 */
export async function conflictsPage(page: ProjectPageContext, pr: PullRequestRow, error: string | null = null, notice: VNode | null = null): Promise<VNode> {
  const [view, names, source] = await Promise.all([
    pullRequestConflicts(page.ctx, pr),
    userNames(page.ctx, [pr.submitterId]),
    pr.sourceProjectId === null ? Promise.resolve(null) : getProjectRow(page.ctx.db, pr.sourceProjectId),
  ]);
  const submitted: Submitted = page.form.sourceHead === view.sourceHead && page.form.targetHead === view.targetHead ? page.form : {};
  const editable = view.blocked === null && view.destination !== null && view.files.length > 0;
  const files = view.files.map((file, n) => <FileSection key={file.path} file={file} n={n} view={view} submitted={submitted} editable={editable} />);
  return (
    <ProjectLayout page={page} tab="pulls" title={`Conflicts · #${pr.number} ${pr.title}`} scripts={['conflicts.js']}>
      <PullHeader page={page} pr={pr} tab="conflicts" submitter={names.get(pr.submitterId) ?? 'unknown'} sourcePath={source?.path ?? null} />
      <Flash error={error} />
      {notice && (
        <div class="flash notice" role="status">
          {notice}
        </div>
      )}
      <h2>Merge conflicts</h2>
      {view.blocked && <p class="status status-failed">{view.blocked}</p>}
      {view.files.length === 0 && !view.blocked && (
        <p>
          {'No merge conflicts: the pull request merges cleanly. '}
          <a href={pullUrl(page.project.path, pr.number, '#merge-box')}>Back to the pull request</a>
        </p>
      )}
      {view.files.length > 0 && (
        <>
          <p>
            {`Merging ${view.labels.theirs} into ${view.labels.ours}: "ours" is the source branch, "theirs" the target branch. `}
            {`${view.files.length} conflicted ${view.files.length === 1 ? 'path' : 'paths'}.`}
          </p>
          {!editable && !view.blocked && (
            <p class="meta">{page.user ? 'You cannot write the code of the source or the target project.' : 'Sign in to resolve the conflicts.'}</p>
          )}
          <nav aria-label="Conflicted files">
            <ol class="conflict-list">
              {view.files.map((file, n) => (
                <li key={file.path}>
                  <a href={`#file-${n}`}>{file.path}</a> <span class="meta">{KIND_LABELS[file.kind]}</span>
                </li>
              ))}
            </ol>
          </nav>
          {editable ? (
            <PostForm page={page} action={pullUrl(page.project.path, pr.number, '/conflicts')} label="Resolve conflicts" class="conflicts-form">
              <HiddenFields fields={{ sourceHead: view.sourceHead, targetHead: view.targetHead }} />
              {files}
              <CommitFields page={page} pr={pr} view={view} />
            </PostForm>
          ) : (
            <div class="conflicts-form">{files}</div>
          )}
        </>
      )}
    </ProjectLayout>
  );
}

/** The files of a submitted resolution: per `path-N` field, its `choice-N`, `content-N` and `region-N-K` fields. */
function submittedFiles(form: Record<string, string>): FileResolutionInput[] {
  const byIndex = new Map<string, FileResolutionInput>();
  const fileOf = (n: string) => {
    let file = byIndex.get(n);
    if (!file) byIndex.set(n, (file = { path: '', choice: '', content: null, regions: new Map() }));
    return file;
  };
  for (const [key, value] of Object.entries(form)) {
    const match = /^(path|choice|content|region)-(\d{1,6})(?:-(\d{1,6}))?$/.exec(key);
    if (!match) continue;
    const [, field, n, k] = match;
    const file = fileOf(n);
    if (field === 'path' && k === undefined) file.path = value;
    else if (field === 'choice' && k === undefined) file.choice = value;
    else if (field === 'content' && k === undefined) file.content = value;
    else if (field === 'region' && k !== undefined) file.regions.set(Number(k), value);
  }
  return [...byIndex.values()].filter((f) => f.path !== '');
}

/** The notice after a resolution committed to a new branch (`?branch=`): its name and where to open a request from it. */
function createdNotice(page: ProjectPageContext, pr: PullRequestRow): VNode | null {
  const branch = page.query.branch;
  if (!branch) return null;
  const compare = new URLSearchParams({ target: pr.targetBranch, source: `${pr.targetProjectId}:${branch}` });
  return (
    <p>
      {'The resolution was committed to the new branch '}
      <code>{branch}</code>
      {'. '}
      <a href={`/${page.project.path}/~pulls/new?${compare}`}>Open a pull request from it</a>
    </p>
  );
}

/** The routes of the conflicts page. */
export const conflictRoutes: ProjectPageRoute[] = [
  {
    method: 'GET',
    path: '/~pulls/:number/conflicts',
    handler: async (page): Promise<PageResult> => {
      const pr = await requestOfPage(page);
      return conflictsPage(page, pr, null, createdNotice(page, pr));
    },
  },
  pullAction(
    'conflicts',
    (page, pr) =>
      resolveConflicts(page.ctx, pr, {
        sourceHead: page.form.sourceHead ?? '',
        targetHead: page.form.targetHead ?? '',
        files: submittedFiles(page.form),
        message: page.form.message ?? '',
        newBranch: page.form.newBranch ?? '',
      }),
    (page, pr, result) =>
      result.created
        ? pullUrl(page.project.path, pr.number, `/conflicts?${new URLSearchParams({ branch: result.branch })}`)
        : pullUrl(page.project.path, pr.number, '#merge-box'),
    (page, pr, error) => conflictsPage(page, pr, error),
  ),
];
