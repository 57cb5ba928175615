/** The README of a directory, shown below its listing (the project's home, the files pages). */
import { highlightFile } from '../highlight.js';
import { markdownBase } from './code.js';
import { Markdown } from './markdown.js';

/**
 * A README: Markdown (`.md`, `.markdown`) rendered with its links resolved against `revision`
 * and `path` of `projectPath`, any other file as highlighted text.
 */
export function Readme({
  readme,
  projectPath,
  revision,
  path,
}: {
  readme: { name: string; text: string; hash: string };
  projectPath: string;
  revision: string;
  path: string;
}) {
  return (
    <section aria-labelledby="readme" class="readme">
      <h2 id="readme">{readme.name}</h2>
      {/\.(md|markdown)$/i.test(readme.name) ? (
        <Markdown text={readme.text} base={markdownBase(projectPath, revision, path)} />
      ) : (
        <pre>
          <code dangerouslySetInnerHTML={{ __html: highlightFile(readme.hash, readme.name, readme.text) }} />
        </pre>
      )}
    </section>
  );
}
