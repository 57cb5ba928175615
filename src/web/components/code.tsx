/**
 * Pieces shared by the code pages (files, commits, branches, tags, compare): their URLs, a
 * revision selector, a commit row and dates.
 */
import type { Commit } from '../../domain/repositories/index.js';

/** Encodes a repository path or revision for a URL, keeping its `/` separators. */
export function encodePath(path: string): string {
  return path.split('/').map(encodeURIComponent).join('/');
}

/**
 * The URL of a file page of a project: `/<project>/~files/<revision>/<path>` (`kind` `files`),
 * the raw bytes `…/~raw/…`, the blame view `…/~blame/…`, with the path (and a revision holding
 * `/`) kept readable.
 */
export function codeUrl(projectPath: string, kind: 'files' | 'raw' | 'blame', revision: string, path = ''): string {
  return `/${projectPath}/~${kind}/${encodePath(revision)}${path ? `/${encodePath(path)}` : ''}`;
}

/** Where relative links and images of a repository file in `dir` at `revision` point (Markdown `base`). */
export function markdownBase(projectPath: string, revision: string, dir: string): { files: string; raw: string } {
  return { files: `${codeUrl(projectPath, 'files', revision, dir)}/`, raw: `${codeUrl(projectPath, 'raw', revision, dir)}/` };
}

/** The URL of a commit page. */
export function commitUrl(projectPath: string, hash: string): string {
  return `/${projectPath}/~commits/${hash}`;
}

/** The first line of a commit message. */
export function subjectOf(commit: Pick<Commit, 'message'>): string {
  return commit.message.split('\n', 1)[0];
}

/** A date as `<time>` with the ISO instant for machines and `YYYY-MM-DD HH:MM UTC` for people. */
export function DateTime({ date }: { date: Date }) {
  const iso = date.toISOString();
  return <time datetime={iso}>{`${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`}</time>;
}

/** The branches and tags as the suggestions (`<datalist id>`) of a revision input. */
export function RevisionOptions({ id, branches, tags }: { id: string; branches: string[]; tags: string[] }) {
  return (
    <datalist id={id}>
      {branches.map((b) => (
        <option key={`b:${b}`} value={b}>
          branch
        </option>
      ))}
      {tags.map((t) => (
        <option key={`t:${t}`} value={t}>
          tag
        </option>
      ))}
    </datalist>
  );
}

/**
 * A GET form choosing a revision: a labelled input with the branches and tags as suggestions
 * (`<datalist>`, so any commit hash works too); submits `name` to `action`, keeping `hidden`.
 */
export function RevisionSelector(props: {
  action: string;
  name: string;
  label: string;
  value: string;
  branches: string[];
  tags: string[];
  hidden?: Record<string, string>;
  button?: string;
}) {
  const id = `revision-${props.name}`;
  return (
    <form method="get" action={props.action} class="query revision-selector">
      <label for={id}>{props.label}</label>
      <input id={id} name={props.name} value={props.value} list={`${id}-list`} autocomplete="off" />
      <RevisionOptions id={`${id}-list`} branches={props.branches} tags={props.tags} />
      {Object.entries(props.hidden ?? {}).map(([k, v]) => (
        <input key={k} type="hidden" name={k} value={v} />
      ))}
      <button type="submit">{props.button ?? 'Show'}</button>
    </form>
  );
}

/** One commit in a list: subject linked to its page, author, date and short hash. */
function CommitItem({ projectPath, commit }: { projectPath: string; commit: Commit }) {
  return (
    <li class="commit">
      <a href={commitUrl(projectPath, commit.hash)} class="commit-subject">
        {subjectOf(commit)}
      </a>
      <span class="meta">
        {' '}
        {commit.author.name} · <DateTime date={commit.committer.date} /> · <code>{commit.hash.slice(0, 8)}</code>
      </span>
    </li>
  );
}

/** Commits, newest first, as the list of the log and compare pages. */
export function CommitList({ projectPath, commits }: { projectPath: string; commits: Commit[] }) {
  return (
    <ol class="list commits" aria-label="Commits">
      {commits.map((c) => (
        <CommitItem key={c.hash} projectPath={projectPath} commit={c} />
      ))}
    </ol>
  );
}
