/**
 * Pieces shared by the code pages (files, commits, branches, tags, compare): their URLs, the
 * branch and tag switcher, the archive download menu, a commit row with its graph, and dates.
 */
import type { Commit, GraphRow } from '../../domain/repositories/index.js';

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

/**
 * The archive download of a revision, at OneDev 8.6's URL
 * `/~downloads/projects/<projectId>/archives?revision=<rev>&format=zip|tgz`
 * (docs/compatibility.md#gitloom-differs-code-browsing).
 */
export function archiveUrl(projectId: number, revision: string, format: 'zip' | 'tgz'): string {
  return `/~downloads/projects/${projectId}/archives?${new URLSearchParams({ revision, format })}`;
}

/** The "Download" menu of the files page: the revision's tree as a zip or a tar.gz archive. */
export function ArchiveMenu({ projectId, revision }: { projectId: number; revision: string }) {
  return (
    <details class="archive-menu">
      <summary>Download</summary>
      <ul aria-label="Download this revision">
        <li>
          <a href={archiveUrl(projectId, revision, 'zip')} download>
            ZIP archive
          </a>
        </li>
        <li>
          <a href={archiveUrl(projectId, revision, 'tgz')} download>
            TAR.GZ archive
          </a>
        </li>
      </ul>
    </details>
  );
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

/** Width of a graph lane, in the graph's units (a row is 2 units high, stretched to the row). */
const LANE = 1;

/**
 * A commit's row of the commit graph: an SVG stretched to the row's height (lines keep their
 * width: `non-scaling-stroke`), the commit a dot (a round-capped line of no length) on its lane,
 * coloured by lane (`lane-0` … `lane-5`). Decoration only: hidden from assistive technology.
 */
function GraphCell({ row, width }: { row: GraphRow; width: number }) {
  const x = (lane: number) => (lane + 0.5) * LANE;
  return (
    <svg class="commit-graph" aria-hidden="true" viewBox={`0 0 ${width * LANE} 2`} preserveAspectRatio="none" width={width * 14}>
      {row.lines.map((l, i) => (
        <line
          key={i}
          class={`lane-${(l.fromY === 1 ? l.toLane : l.fromLane) % 6}`}
          x1={x(l.fromLane)}
          y1={l.fromY}
          x2={x(l.toLane)}
          y2={l.toY}
          vector-effect="non-scaling-stroke"
        />
      ))}
      <line class={`commit-dot lane-${row.lane % 6}`} x1={x(row.lane)} y1={1} x2={x(row.lane)} y2={1} vector-effect="non-scaling-stroke" />
    </svg>
  );
}

/** One commit in a list: subject linked to its page, author, date and short hash (and its graph row). */
function CommitItem({ projectPath, commit, graph }: { projectPath: string; commit: Commit; graph?: { row: GraphRow; width: number } }) {
  return (
    <li class={graph ? 'commit with-graph' : 'commit'}>
      {graph && <GraphCell row={graph.row} width={graph.width} />}
      <span>
        <a href={commitUrl(projectPath, commit.hash)} class="commit-subject">
          {subjectOf(commit)}
        </a>
        <span class="meta">
          {' '}
          {commit.author.name} · <DateTime date={commit.committer.date} /> · <code>{commit.hash.slice(0, 8)}</code>
        </span>
      </span>
    </li>
  );
}

/** Commits, newest first, as the list of the log and compare pages; with `graph` (one row per commit, commit-graph.ts) the commit graph beside them. */
export function CommitList({ projectPath, commits, graph }: { projectPath: string; commits: Commit[]; graph?: GraphRow[] }) {
  const width = graph ? Math.max(1, ...graph.map((r) => r.width)) : 0;
  return (
    <ol class="list commits" aria-label="Commits">
      {commits.map((c, i) => (
        <CommitItem key={c.hash} projectPath={projectPath} commit={c} graph={graph && { row: graph[i], width }} />
      ))}
    </ol>
  );
}

const UNITS: [number, string][] = [
  [365 * 86_400, 'year'],
  [30 * 86_400, 'month'],
  [7 * 86_400, 'week'],
  [86_400, 'day'],
  [3_600, 'hour'],
  [60, 'minute'],
];

/** How long before `now` a date is, in words: `just now`, `5 minutes ago`, `1 year ago` (a future date counts as now). */
export function relativeDate(date: Date, now = new Date()): string {
  const seconds = Math.floor((now.getTime() - date.getTime()) / 1000);
  for (const [size, unit] of UNITS) {
    const n = Math.floor(seconds / size);
    if (n >= 1) return `${n} ${unit}${n === 1 ? '' : 's'} ago`;
  }
  return 'just now';
}

/** A date in words relative to now (`3 days ago`), the exact instant in `datetime` and `title`. */
export function RelativeDate({ date }: { date: Date }) {
  const iso = date.toISOString();
  return (
    <time datetime={iso} title={`${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`}>
      {relativeDate(date)}
    </time>
  );
}

/** The most branches, and tags, the switcher lists (the others are opened by typing their name). */
const MAX_SWITCHER_NAMES = 200;

/**
 * The branch and tag switcher: a `<details>` menu listing the branches and tags as links
 * (`hrefOf(name)`), with a GET form whose input filters the lists as one types (switcher.js) and,
 * submitted, opens any revision typed (a commit hash too): `name` to `action`, keeping `hidden`.
 * Without JavaScript the lists are plain links and the form still opens what is typed.
 */
export function RevisionSwitcher(props: {
  action: string;
  name: string;
  current: string;
  branches: string[];
  tags: string[];
  hrefOf: (revision: string) => string;
  hidden?: Record<string, string>;
}) {
  const id = `switch-${props.name}`;
  const kind = props.branches.includes(props.current) ? 'Branch' : props.tags.includes(props.current) ? 'Tag' : 'Revision';
  const shown = /^[0-9a-f]{40}$/.test(props.current) ? props.current.slice(0, 8) : props.current;
  const group = (label: string, names: string[]) =>
    names.length > 0 && (
      <>
        <p class="switcher-group">{label}</p>
        <ul aria-label={label} data-filter-list="">
          {names.slice(0, MAX_SWITCHER_NAMES).map((n) => (
            <li key={n}>
              <a href={props.hrefOf(n)} aria-current={n === props.current ? 'true' : undefined}>
                {n}
              </a>
            </li>
          ))}
        </ul>
        {names.length > MAX_SWITCHER_NAMES && <p class="meta">{`${(names.length - MAX_SWITCHER_NAMES).toLocaleString('en-US')} more: type the name`}</p>}
      </>
    );
  return (
    <details class="revision-switcher" data-switcher>
      <summary>
        {`${kind}: `}
        <strong>{shown}</strong>
      </summary>
      <div class="switcher-panel">
        <form method="get" action={props.action} class="switcher-form">
          <label for={id}>Branch, tag or commit</label>
          <span class="switcher-row">
            <input id={id} name={props.name} autocomplete="off" spellcheck={false} data-filter-input />
            {Object.entries(props.hidden ?? {}).map(([k, v]) => (
              <input key={k} type="hidden" name={k} value={v} />
            ))}
            <button type="submit">Go</button>
          </span>
        </form>
        {group('Branches', props.branches)}
        {group('Tags', props.tags)}
        <p class="switcher-none" hidden data-filter-none>
          No branch or tag matches.
        </p>
      </div>
    </details>
  );
}
