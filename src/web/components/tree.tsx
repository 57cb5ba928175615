/** A directory's entries as the tree views show them (files pages, project home): name, last commit, date. */
import type { LastCommit, TreeEntry } from '../../domain/repositories/index.js';
import { codeUrl, commitUrl, RelativeDate } from './code.js';

/**
 * The entries of directory `dir` at `revision`, directories first as listed, each linked to its
 * page with the subject of its last commit (linked to the commit), its author and when; a
 * submodule is named with its commit, not linked.
 */
export function TreeTable({
  projectPath,
  revision,
  dir,
  entries,
  lastCommits,
}: {
  projectPath: string;
  revision: string;
  dir: string;
  entries: TreeEntry[];
  lastCommits: Map<string, LastCommit>;
}) {
  return (
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
          const last = lastCommits.get(entry.name);
          return (
            <tr key={entry.name} class={entry.type === 'tree' ? 'dir' : 'file'}>
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
              <td class="tree-commit">
                {last && (
                  <>
                    <a href={commitUrl(projectPath, last.hash)}>{last.subject || last.hash.slice(0, 8)}</a>
                    <span class="meta"> {last.authorName}</span>
                  </>
                )}
              </td>
              <td class="tree-date meta">{last && <RelativeDate date={new Date(last.authorDate)} />}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
