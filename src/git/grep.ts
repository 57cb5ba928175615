/**
 * `git grep` over a commit's tree, with fixed strings only — the candidates of code search on a
 * branch or tag (docs/compatibility.md#code-search). No user pattern ever reaches git as a
 * pattern: every text is matched literally (`-F`), ASCII case-insensitively (`-i`).
 */
import { gitDir, runGit, value } from './command.js';
import { assertObjectId } from './names.js';

/**
 * The paths of the files of `commit`'s tree that contain every one of `texts` (each on some line,
 * ASCII case ignored), in tree order: `git grep -F -i -l -z --all-match -e <text>… <commit>`.
 * Binary files are searched too (their bytes), symbolic links and submodules are not files.
 *
 * @param repo absolute path of a bare repository.
 * @param commit a full commit id.
 * @param texts at least one text, none starting with `-` nor holding a NUL, CR or newline.
 * @throws BadRequest for a malformed commit id or text; GitError when git fails.
 */
export async function filesContainingAll(repo: string, commit: string, texts: readonly string[]): Promise<string[]> {
  assertObjectId(commit);
  if (texts.length === 0) throw new Error('filesContainingAll needs at least one text');
  const patterns = texts.flatMap((text) => ['-e', value(text)]);
  const { stdout } = await runGit([gitDir(repo), 'grep', '-F', '-i', '-l', '-z', '--all-match', ...patterns, value(commit), '--'], { okExitCodes: [0, 1] });
  // each record is `<commit>:<path>`
  const prefix = `${commit}:`;
  return stdout
    .toString('utf8')
    .split('\0')
    .filter((record) => record.startsWith(prefix))
    .map((record) => record.slice(prefix.length));
}
