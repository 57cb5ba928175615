import { BadRequest } from '../errors.js';

/**
 * A query that does not follow its language: bad syntax (`Unexpected 'xyz' at column 17`),
 * an unknown or misused field (`Field not found: Foo`,
 * `Field 'Title' is not applicable for operator 'is'`), an unsortable field
 * (`Can not order by field: X`) or an unreadable value (`Unrecognized date: X`).
 * Maps to HTTP 400 (docs/compatibility.md#gitloom-differs-errors).
 *
 * `column` is the 1-based position in the query text of the offending token, when known
 * (it counts characters from the start of the whole text, newlines included).
 */
export class QuerySyntaxError extends BadRequest {
  readonly column: number | null;

  constructor(message: string, column: number | null = null) {
    super(message, { code: 'GITLOOM_ERR_QUERY_SYNTAX' });
    this.column = column;
  }
}
