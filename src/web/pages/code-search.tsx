/**
 * `/~code?q=<text>[&mode=literal|regex|symbol][&project=<path>][&path=<glob>][&lang=<language>][&ref=<ref>]`:
 * code search (docs/compatibility.md#code-search) over the default branches of the projects whose
 * code the visitor can read — each file with its first matching lines and a line of context around each, the matches marked, linked
 * to the line in the file at the commit indexed; or, in the symbol mode, the definitions named so
 * (exactly, then by prefix), each with its kind and scope, linked to its line. `regex=1` is the
 * regex mode. With a project chosen, a branch and tag switcher searches that project at another
 * branch, tag or commit (`ref`) instead (not in the symbol mode: symbols are indexed for the
 * default branches). The global search page links here with its text.
 */
import type { CodeLineMatch, CodeSearchResults, SymbolSearchResults } from '../../domain/code-search/index.js';
import {
  MAX_RESULT_FILES,
  MAX_SYMBOL_RESULTS,
  MAX_TAGS_PER_FILE,
  refChoices,
  searchCode,
  searchCodeAtRef,
  searchSymbols,
  symbolsAvailable,
} from '../../domain/code-search/index.js';
import { BadRequest } from '../../errors.js';
import { codeUrl, RevisionSwitcher } from '../components/code.js';
import { Flash } from '../components/flash.js';
import { Layout } from '../components/layout.js';
import type { PageModule } from '../page.js';

/** A line's text with its matched spans in `<mark>`. */
function MarkedLine({ match }: { match: CodeLineMatch }) {
  const parts = [];
  let at = 0;
  for (const span of match.spans) {
    if (span.start < at || span.end === span.start) continue;
    parts.push(match.text.slice(at, span.start), <mark key={span.start}>{match.text.slice(span.start, span.end)}</mark>);
    at = span.end;
  }
  parts.push(match.text.slice(at));
  return <code>{parts}</code>;
}

/** A result line's class: `context` around a match, `gap` after lines left out. */
function lineClass(line: CodeLineMatch, previous: CodeLineMatch | undefined): string | undefined {
  const classes = [];
  if (line.spans.length === 0) classes.push('context');
  if (previous && previous.line < line.line - 1) classes.push('gap');
  return classes.join(' ') || undefined;
}

function IndexingNotice({ indexing }: { indexing: number }) {
  return indexing > 0 ? (
    <p class="flash notice" role="status">
      {`${indexing} project${indexing === 1 ? ' is' : 's are'} still being indexed: results may miss their latest changes.`}
    </p>
  ) : null;
}

/** The definitions found: kind, name and scope, and the place linked to its line at the commit indexed. */
function SymbolResults({ found }: { found: SymbolSearchResults }) {
  return (
    <>
      <IndexingNotice indexing={found.indexing} />
      {found.symbols.length === 0 ? (
        <p class="empty">No symbols match.</p>
      ) : (
        <table class="symbol-results">
          <caption class="visually-hidden">Symbols</caption>
          <thead>
            <tr>
              <th scope="col">Kind</th>
              <th scope="col">Symbol</th>
              <th scope="col">Defined at</th>
            </tr>
          </thead>
          <tbody>
            {found.symbols.map((symbol) => {
              const url = codeUrl(symbol.projectPath, 'files', symbol.commit, symbol.path);
              return (
                <tr key={`${symbol.projectId}:${symbol.path}:${symbol.line}:${symbol.name}`}>
                  <td class="symbol-kind">{symbol.kind}</td>
                  <td>
                    <code>{symbol.name}</code>
                    {symbol.scope && <span class="meta">{` in ${symbol.scope}`}</span>}
                  </td>
                  <td>
                    <a href={`/${symbol.projectPath}`}>{symbol.projectPath}</a>
                    {' · '}
                    <a href={`${url}#L${symbol.line}`}>{`${symbol.path}:${symbol.line}`}</a>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
      {found.skipped > 0 && (
        <p class="meta">{`${found.skipped} file${found.skipped === 1 ? ' has' : 's have'} missing or cut symbols: Universal Ctags failed or timed out on ${found.skipped === 1 ? 'it' : 'them'}, or found more than ${MAX_TAGS_PER_FILE.toLocaleString('en-US')}.`}</p>
      )}
      {found.incomplete && (
        <p class="meta">{`Only the first ${MAX_SYMBOL_RESULTS} symbols are shown: narrow the search with a longer name, a project, a path or a language.`}</p>
      )}
    </>
  );
}

function Results({ found }: { found: CodeSearchResults }) {
  return (
    <>
      <IndexingNotice indexing={found.indexing} />
      {found.files.length === 0 && <p class="empty">No code matches.</p>}
      {found.files.map((file) => {
        const url = `/${file.projectPath}/~files/${file.commit}/${file.path}`;
        return (
          <section class="code-result" key={`${file.projectId}:${file.path}`} aria-label={`${file.projectPath}: ${file.path}`}>
            <h2>
              <a href={`/${file.projectPath}`}>{file.projectPath}</a>
              {' · '}
              <a href={url}>{file.path}</a>
            </h2>
            <ol class="code-result-lines search-results">
              {file.lines.map((match, i) => (
                <li key={match.line} class={lineClass(match, file.lines[i - 1])}>
                  <a href={`${url}#L${match.line}`} aria-label={`Line ${match.line}`}>
                    {match.line}
                  </a>{' '}
                  <MarkedLine match={match} />
                </li>
              ))}
            </ol>
            {file.moreLines && (
              <p class="meta">
                <a href={url}>More matches in this file</a>
              </p>
            )}
          </section>
        );
      })}
      {found.skipped > 0 && (
        <p class="meta">{`${found.skipped} file${found.skipped === 1 ? ' is' : 's are'} not searched: binary, larger than 1 MiB, or vendored.`}</p>
      )}
      {found.incomplete && (
        <p class="meta">{`Only the first ${MAX_RESULT_FILES} files are shown, or the search stopped early: narrow it with a project, a path or a language.`}</p>
      )}
    </>
  );
}

export const codeSearchPages: PageModule = {
  pages: [
    {
      method: 'GET',
      path: '/~code',
      handler: async (page) => {
        const { q = '', regex = '', project = '', path = '', lang = '', ref = '' } = page.query;
        const mode = page.query.mode ?? (regex === '1' ? 'regex' : 'literal');
        if (mode !== 'literal' && mode !== 'regex' && mode !== 'symbol') throw new BadRequest(`Unknown search mode: ${mode}`);
        const available = mode !== 'symbol' || (await symbolsAvailable(page.ctx));
        const filters = { project: project || undefined, path: path || undefined, language: lang || undefined };
        const query = { text: q, regex: mode === 'regex', ...filters };
        const run = async (): Promise<{ found: CodeSearchResults | null; symbols: SymbolSearchResults | null; error: string | null }> => {
          if (q.trim() === '' || !available) return { found: null, symbols: null, error: null };
          try {
            if (mode === 'symbol') {
              if (ref) throw new BadRequest('Symbol search covers the default branches only');
              return { found: null, symbols: await searchSymbols(page.ctx, { text: q, ...filters }), error: null };
            }
            return { found: ref ? await searchCodeAtRef(page.ctx, { ...query, ref }) : await searchCode(page.ctx, query), symbols: null, error: null };
          } catch (failure) {
            if (!(failure instanceof BadRequest)) throw failure;
            page.reply.code(400);
            return { found: null, symbols: null, error: failure.message };
          }
        };
        // the branches and tags of the switcher are read while the search runs
        const [{ found, symbols, error }, choices] = await Promise.all([run(), project ? refChoices(page.ctx, project) : null]);
        // the other fields, kept when the switcher changes the ref
        const kept: Record<string, string> = Object.fromEntries(
          Object.entries({ q, mode: page.query.mode ?? '', regex, project, path, lang }).filter(([, v]) => v !== ''),
        );
        return (
          <Layout page={page} title={q ? `Code: ${q}` : 'Code search'} scripts={choices ? ['switcher.js'] : []}>
            <h1>Code search</h1>
            <form method="get" action="/~code" role="search" class="search-form code-search-form">
              <label for="code-q">{ref ? `Search the code at ${ref}` : 'Search the code of default branches'}</label>
              <input id="code-q" type="search" name="q" value={q} maxLength={1000} />
              <button type="submit">Search</button>
              <fieldset class="inline search-modes">
                <legend>Match</legend>
                <label class="inline">
                  <input type="radio" name="mode" value="literal" checked={mode === 'literal'} /> Text
                </label>
                <label class="inline">
                  <input type="radio" name="mode" value="regex" checked={mode === 'regex'} /> Regular expression (RE2)
                </label>
                <label class="inline">
                  <input type="radio" name="mode" value="symbol" checked={mode === 'symbol'} /> Symbol
                </label>
              </fieldset>
              <label class="inline">
                Project <input type="text" name="project" value={project} size={16} />
              </label>
              <label class="inline">
                Path <input type="text" name="path" value={path} size={16} placeholder="src/**.ts" />
              </label>
              <label class="inline">
                Language <input type="text" name="lang" value={lang} size={12} placeholder="typescript" />
              </label>
              {ref && <input type="hidden" name="ref" value={ref} />}
            </form>
            {choices && (
              <div class="code-search-ref">
                <RevisionSwitcher
                  action="/~code"
                  name="ref"
                  current={ref || choices.defaultBranch || ''}
                  branches={choices.branches}
                  tags={choices.tags}
                  hrefOf={(name) => `/~code?${new URLSearchParams(name === choices.defaultBranch ? kept : { ...kept, ref: name })}`}
                  hidden={kept}
                />{' '}
                {ref && (
                  <a href={`/~code?${new URLSearchParams(kept)}`} class="meta">
                    Back to the default branch
                  </a>
                )}
              </div>
            )}
            <Flash error={error} />
            {!available && (
              <p class="flash notice" role="status">
                Symbol search is unavailable: this server has no Universal Ctags to find definitions with.
              </p>
            )}
            {found && <Results found={found} />}
            {symbols && <SymbolResults found={symbols} />}
          </Layout>
        );
      },
    },
  ],
};
