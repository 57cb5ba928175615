/** A directory's entries as the tree views show them (files pages, project home): name, last commit, date. */
import type { LastCommit, TreeEntry } from '../../domain/repositories/index.js';
import { codeUrl, commitUrl, encodePath, RelativeDate } from './code.js';

/** What the last-commit and date cells of an entry hold: the commit's subject (linked) and author, and when. */
export function lastCommitCells(projectPath: string, last: LastCommit | undefined) {
  return {
    commit: last && (
      <>
        <a href={commitUrl(projectPath, last.hash)}>{last.subject || last.hash.slice(0, 8)}</a>
        <span class="meta"> {last.authorName}</span>
      </>
    ),
    date: last && <RelativeDate date={new Date(last.authorDate)} />,
  };
}

/** How long a tree view waits for the last commits of its entries before it shows them without (ms). */
export const LAST_COMMITS_WAIT_MS = 300;

/** The URLs a tree view without its last commits names: the page waiting for them, and their JSON (`/~last-commits/<commit>[/<dir>]`). */
export function pendingLastCommits(projectPath: string, page: string, commitHash: string, dir: string): { page: string; json: string } {
  return { page: `${page}?last-commits=wait`, json: `/${projectPath}/~last-commits/${commitHash}${dir ? `/${encodePath(dir)}` : ''}` };
}

/**
 * The entries of directory `dir` at `revision`, directories first as listed, each linked to its
 * page with the subject of its last commit (linked to the commit), its author and when; a
 * submodule is named with its commit, not linked. Without `lastCommits` (still being read) the
 * table names `pending` — the URL of the page that waits for them — and tree.js fills the cells
 * from its JSON (`/~last-commits/…`), while the link shows them without JavaScript.
 */
export function TreeTable({
  projectPath,
  revision,
  dir,
  entries,
  lastCommits,
  pending,
}: {
  projectPath: string;
  revision: string;
  dir: string;
  entries: TreeEntry[];
  lastCommits: Map<string, LastCommit> | null;
  pending?: { page: string; json: string };
}) {
  return (
    <>
      {lastCommits === null && pending && (
        <p class="meta" role="status" data-last-commits={pending.json}>
          Reading the last commits… <a href={pending.page}>Show them when read</a>
        </p>
      )}
      <table class="tree-table">
        <caption class="visually-hidden">Entries with their last commit</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Last commit</th>
            <th scope="col">Date</th>
          </tr>
        </thead>
        <tbody>
          {entries.map((entry) => {
            const cells = lastCommitCells(projectPath, lastCommits?.get(entry.name));
            return (
              <tr key={entry.name} class={entry.type === 'tree' ? 'dir' : 'file'} data-entry={entry.name}>
                <th scope="row">
                  {entry.type === 'commit' ? (
                    <>
                      {`${entry.name} @ ${entry.hash.slice(0, 8)}`} <span class="meta">(submodule)</span>
                    </>
                  ) : (
                    <a href={codeUrl(projectPath, 'files', revision, dir ? `${dir}/${entry.name}` : entry.name)}>
                      {entry.type === 'tree' ? `${entry.name}/` : entry.name}
                    </a>
                  )}
                </th>
                <td class="tree-commit">{cells.commit}</td>
                <td class="tree-date meta">{cells.date}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </>
  );
}
