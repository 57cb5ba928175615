/**
 * The parsed form of a OneDev query (docs/compatibility.md#projects-query-language, docs/compatibility.md#pull-requests-query-language, docs/compatibility.md#builds-query-language,
 * docs/compatibility.md#code-comments-query-language and docs/compatibility.md#issues-query-language), produced by `parseQuery` and compiled to SQL by the
 * domain layer.
 *
 * Operators are canonical: lowercase words joined by single spaces (`is greater than`,
 * `to be reviewed by`). Field names are spelled as the language definition spells them
 * (`Last Activity Date`), or as written for a field a language accepts by any name (a build
 * condition's job params). Values are the unescaped text between the quotes. `column` is the
 * 1-based position of the criterion's first character in the query text.
 */

/** `left and right` / `left or right`; chains are left-associative, `and` binds tighter. */
export interface BinaryCriteria {
  readonly kind: 'and' | 'or';
  readonly left: Criteria;
  readonly right: Criteria;
}

/**
 * The operands of a chain `a or b or c` (or of `and`): the left-deep tree the parser builds,
 * read in a loop, so a consumer recurses only as deep as the parentheses and `not`s, however
 * long the chain. A parenthesized operand of the same kind (`a or (b or c)`) stays one operand.
 */
export function chainOperands(criteria: BinaryCriteria): Criteria[] {
  const rights: Criteria[] = [];
  let node: Criteria = criteria;
  while ((node.kind === 'and' || node.kind === 'or') && node.kind === criteria.kind) {
    rights.push(node.right);
    node = node.left;
  }
  return [node, ...rights.reverse()];
}

/** `not(operand)`. */
export interface NotCriteria {
  readonly kind: 'not';
  readonly operand: Criteria;
}

/**
 * `"Field" operator "value"`, or `"Field" operator` for operators without a value
 * (`is empty`, `is me`; see `LanguageDefinition.unaryFieldOperators`), where `value` is null.
 */
export interface FieldCriteria {
  readonly kind: 'field';
  readonly field: string;
  readonly operator: string;
  readonly value: string | null;
  readonly column: number;
}

/**
 * A criterion without a field: a bare operator (`open`, `owned by me`, `has merge conflicts`,
 * `value` null) or an operator with a quoted value (`submitted by "alice"`,
 * `children of "acme/**"`, `includes issue "g/app#3"`, `has any "Link"`).
 */
export interface OperatorCriteria {
  readonly kind: 'operator';
  readonly operator: string;
  readonly value: string | null;
  readonly column: number;
}

/** `~text~`: the unescaped text between the tildes, as written (split it on whitespace). */
export interface FuzzyCriteria {
  readonly kind: 'fuzzy';
  readonly text: string;
  readonly column: number;
}

/** `#123` or `123`: the entity number, in any project. */
export interface NumberCriteria {
  readonly kind: 'number';
  readonly number: number;
  readonly column: number;
}

/** One end of `fixed between`: `build "a"`, `branch "main"`, `tag "v1"`, `commit "p:abc"`. */
export interface RevisionTarget {
  /** Lowercase kind, one of the language's `fixedBetween` kinds. */
  readonly type: string;
  readonly value: string;
}

/** Issues: `fixed between <kind> "a" and <kind> "b"` (docs/compatibility.md#issues-query-language). */
export interface FixedBetweenCriteria {
  readonly kind: 'fixedBetween';
  readonly from: RevisionTarget;
  readonly to: RevisionTarget;
  readonly column: number;
}

/**
 * Issues: `any "Link" matching(criteria)` / `all "Link" matching(criteria)`; `criteria`
 * applies to the linked issues (docs/compatibility.md#issues-query-language).
 */
export interface LinkMatchCriteria {
  readonly kind: 'linkMatch';
  readonly quantifier: 'any' | 'all';
  readonly link: string;
  readonly criteria: Criteria;
  readonly column: number;
}

/** Any criterion of any of the five languages. */
export type Criteria =
  BinaryCriteria | NotCriteria | FieldCriteria | OperatorCriteria | FuzzyCriteria | NumberCriteria | FixedBetweenCriteria | LinkMatchCriteria;

/** One `order by` item; the direction defaults to `asc`. */
export interface QueryOrder {
  readonly field: string;
  readonly direction: 'asc' | 'desc';
}

/**
 * A whole query. `criteria` is null for an empty query or one with only `order by`;
 * `orders` is empty without `order by` (the caller applies the language's default order).
 */
export interface ParsedQuery {
  readonly criteria: Criteria | null;
  readonly orders: readonly QueryOrder[];
}
