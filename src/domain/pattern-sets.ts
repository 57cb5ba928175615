import { parsePatternSet, PatternSyntaxError } from '../ci/patterns.js';
import { BadRequest } from '../errors.js';

/**
 * Checks a stored pattern set (space-separated path wildcards, `-` excludes: protections'
 * branches, tags and file paths, job privileges' job and report names) with the parser its
 * matchers use, src/ci/patterns.ts `parsePatternSet`.
 *
 * @param text the pattern set as it will be stored.
 * @param field its place for messages, e.g. `branchProtections[0].branches`.
 * @throws BadRequest `<field>: Malformed pattern set: unterminated quote in '"main'`, `… dangling
 *   escape in …` or `…: a pattern is longer than 1000 characters (1001)`.
 */
export function validatePatternSet(text: string, field: string): void {
  try {
    parsePatternSet(text);
  } catch (error) {
    if (!(error instanceof PatternSyntaxError)) throw error;
    throw new BadRequest(`${field}: ${error.message}`);
  }
}
