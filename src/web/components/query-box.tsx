/**
 * The query box of list pages (projects, pull requests, builds, issues, code comments): a GET
 * form with one labelled search field named `query`, in the entity's query language, and the
 * parse error (the domain's BadRequest message) shown below it.
 */
export interface QueryBoxProps {
  /** The list page's URL (the form's action). */
  action: string;
  /** The current query text. */
  query: string;
  /** An example shown as the placeholder. */
  example: string;
  /** The message of a query the domain refused, if any. */
  error?: string | null;
  /** Other parameters the search keeps (hidden fields), e.g. the revision of the commit log. */
  hidden?: Record<string, string>;
}

/** A search form for a query language, with its error as an alert. */
export function QueryBox({ action, query, example, error, hidden = {} }: QueryBoxProps) {
  return (
    <>
      <form method="get" action={action} class="query" role="search">
        {Object.entries(hidden).map(([name, value]) => (
          <input key={name} type="hidden" name={name} value={value} />
        ))}
        <label for="query">Query</label>
        <input
          id="query"
          name="query"
          type="search"
          value={query}
          placeholder={`e.g. ${example}`}
          aria-invalid={error ? 'true' : undefined}
          aria-describedby={error ? 'query-error' : undefined}
        />
        <button type="submit">Search</button>
      </form>
      {error && (
        <p id="query-error" class="flash error" role="alert">
          {error}
        </p>
      )}
    </>
  );
}
