/**
 * Checks the raw syntax tree of src/query/query.peggy against a language definition and
 * builds the public AST (src/query/ast.ts): operators and field names in canonical form,
 * field/operator pairs and sort fields checked, dates and integers readable.
 */
import type { Criteria, ParsedQuery, QueryOrder } from './ast.js';
import { parseIntegerValue, parseQueryDate } from './dates.js';
import { QuerySyntaxError } from './errors.js';
import type { FieldDefinition, LanguageDefinition } from './languages.js';

/** A word or quoted string of the input and its 0-based offset. */
export interface RawToken {
  text: string;
  offset: number;
}

/** Raw criteria as built by the grammar's actions. */
export type RawCriteria =
  | { type: 'and' | 'or'; left: RawCriteria; right: RawCriteria }
  | { type: 'not'; operand: RawCriteria; offset: number }
  | { type: 'fuzzy'; text: string; offset: number }
  | { type: 'number'; text: string; digits: string; offset: number }
  | { type: 'fixedBetween'; words: RawToken[]; from: RawTarget; to: RawTarget; offset: number }
  | { type: 'linkMatch'; quantifier: RawToken; link: RawToken; criteria: RawCriteria; offset: number }
  | { type: 'field'; field: RawToken; operator: RawToken[]; value: RawToken | null; offset: number }
  | { type: 'operator'; operator: RawToken[]; value: RawToken | null; offset: number };

/** One side of `fixed between`. */
export interface RawTarget {
  kind: RawToken;
  value: RawToken;
}

/** The grammar's result. */
export interface RawQuery {
  criteria: RawCriteria | null;
  orders: { field: RawToken; direction: 'asc' | 'desc' }[];
  /** Offset of the `order` keyword; null without `order by`. */
  orderOffset: number | null;
}

/** A language definition prepared for lookups. */
export interface CompiledLanguage {
  definition: LanguageDefinition;
  fields: Map<string, FieldDefinition>;
  sortFields: Map<string, string>;
  bare: Set<string>;
  withValue: Set<string>;
  criteriaPhrases: string[][];
  fieldOperators: Set<string>;
  fieldPhrases: string[][];
  unary: Set<string>;
}

/**
 * Prepares `definition` plus `extraFields` (names get the definition's extra-field policy;
 * full definitions are taken as given) for validation. Built-in fields win over extras
 * of the same name.
 *
 * @throws TypeError when a name is given but the language has no extra-field policy.
 */
export function compileLanguage(definition: LanguageDefinition, extraFields: readonly (string | FieldDefinition)[] = []): CompiledLanguage {
  const fields = new Map<string, FieldDefinition>();
  const sortFields = new Map<string, string>();
  for (const name of definition.sortFields) sortFields.set(name.toLowerCase(), name);
  for (const field of definition.fields) fields.set(field.name.toLowerCase(), field);
  for (const extra of extraFields) {
    let field: FieldDefinition;
    if (typeof extra === 'string') {
      if (definition.extraFields === null) {
        throw new TypeError(`Query language '${definition.name}' has no extra fields`);
      }
      field = { name: extra, operators: definition.extraFields.operators, value: 'text' };
      if (definition.extraFields.sortable && !sortFields.has(extra.toLowerCase())) {
        sortFields.set(extra.toLowerCase(), extra);
      }
    } else {
      field = extra;
    }
    if (!fields.has(field.name.toLowerCase())) fields.set(field.name.toLowerCase(), field);
  }
  const fieldOperators = new Set<string>([
    ...definition.unaryFieldOperators,
    ...(definition.extraFields?.operators ?? []),
    ...extraFields.flatMap((extra) => (typeof extra === 'string' ? [] : extra.operators)),
  ]);
  for (const field of definition.fields) for (const op of field.operators) fieldOperators.add(op);
  const words = (phrase: string): string[] => phrase.split(' ');
  return {
    definition,
    fields,
    sortFields,
    bare: new Set(definition.bareOperators),
    withValue: new Set(definition.valueOperators),
    criteriaPhrases: [...definition.bareOperators, ...definition.valueOperators].map(words),
    fieldOperators,
    fieldPhrases: [...fieldOperators].map(words),
    unary: new Set(definition.unaryFieldOperators),
  };
}

const WHITESPACE = /[\s\uFEFF]/;

/**
 * The token of `text` at `offset` (after any whitespace) as shown in messages: a quoted
 * string or fuzzy text with its delimiters, a word, a number, or one character.
 */
function tokenAt(text: string, offset: number): RawToken | null {
  let start = offset;
  while (start < text.length && WHITESPACE.test(text[start] ?? '')) start++;
  if (start >= text.length) return null;
  const first = text[start] ?? '';
  let end = start + 1;
  if (first === '"' || first === '~') {
    while (end < text.length && text[end] !== first) end += text[end] === '\\' ? 2 : 1;
    end = Math.min(end + 1, text.length);
  } else if (/[A-Za-z0-9_#]/.test(first)) {
    while (end < text.length && /[A-Za-z0-9_]/.test(text[end] ?? '')) end++;
  }
  return { text: text.slice(start, end), offset: start };
}

/**
 * Throws `Unexpected '<token>' at column N` for the token at `offset`, or
 * `Unexpected end of <noun> at column N` when only whitespace is left.
 */
export function unexpectedAt(text: string, offset: number, noun = 'query'): never {
  const token = tokenAt(text, offset);
  if (token === null) {
    throw new QuerySyntaxError(`Unexpected end of ${noun} at column ${text.length + 1}`, text.length + 1);
  }
  throw new QuerySyntaxError(`Unexpected '${token.text}' at column ${token.offset + 1}`, token.offset + 1);
}

/** Index of the first word that continues no phrase of `phrases` (words.length if all do). */
function firstStrayWord(words: readonly string[], phrases: readonly string[][]): number {
  let candidates = phrases;
  for (let i = 0; i < words.length; i++) {
    candidates = candidates.filter((phrase) => phrase[i] === words[i]);
    if (candidates.length === 0) return i;
  }
  return words.length;
}

function endOf(token: RawToken): number {
  return token.offset + token.text.length;
}

class Validator {
  constructor(
    private readonly language: CompiledLanguage,
    private readonly text: string,
    private readonly now: Date,
  ) {}

  private unexpected(offset: number): never {
    unexpectedAt(this.text, offset, this.language.definition.noun);
  }

  /** Rejects a phrase that is no operator, at the first word that does not fit. */
  private strayPhrase(words: RawToken[], phrases: string[][], next: RawToken | null): never {
    const index = firstStrayWord(
      words.map((w) => w.text.toLowerCase()),
      phrases,
    );
    const stray = words[index];
    if (stray !== undefined) this.unexpected(stray.offset);
    this.unexpected(next?.offset ?? endOf(words[words.length - 1] as RawToken));
  }

  criteria(raw: RawCriteria): Criteria {
    switch (raw.type) {
      case 'and':
      case 'or':
        return { kind: raw.type, left: this.criteria(raw.left), right: this.criteria(raw.right) };
      case 'not':
        return { kind: 'not', operand: this.criteria(raw.operand) };
      case 'fuzzy':
        if (this.language.definition.fuzzyCriteria === false) this.unexpected(raw.offset);
        return { kind: 'fuzzy', text: raw.text, column: raw.offset + 1 };
      case 'number':
        return this.number(raw);
      case 'fixedBetween':
        return this.fixedBetween(raw);
      case 'linkMatch':
        return this.linkMatch(raw);
      case 'field':
        return this.field(raw);
      case 'operator':
        return this.operator(raw);
    }
  }

  private number(raw: Extract<RawCriteria, { type: 'number' }>): Criteria {
    if (!this.language.definition.numberCriteria) this.unexpected(raw.offset);
    const number = Number(raw.digits);
    // numbers are integer columns (int32)
    if (!Number.isSafeInteger(number) || number > 2_147_483_647) {
      throw new QuerySyntaxError(`Invalid number '${raw.text}' at column ${raw.offset + 1}`, raw.offset + 1);
    }
    return { kind: 'number', number, column: raw.offset + 1 };
  }

  private fixedBetween(raw: Extract<RawCriteria, { type: 'fixedBetween' }>): Criteria {
    const kinds = this.language.definition.fixedBetween;
    if (kinds.length === 0) this.strayPhrase(raw.words, this.language.criteriaPhrases, null);
    const target = (side: RawTarget) => {
      const type = side.kind.text.toLowerCase();
      if (!kinds.includes(type)) this.unexpected(side.kind.offset);
      return { type, value: side.value.text };
    };
    return { kind: 'fixedBetween', from: target(raw.from), to: target(raw.to), column: raw.offset + 1 };
  }

  private linkMatch(raw: Extract<RawCriteria, { type: 'linkMatch' }>): Criteria {
    if (!this.language.definition.linkMatching) {
      this.strayPhrase([raw.quantifier], this.language.criteriaPhrases, raw.link);
    }
    return {
      kind: 'linkMatch',
      quantifier: raw.quantifier.text.toLowerCase() === 'all' ? 'all' : 'any',
      link: raw.link.text,
      criteria: this.criteria(raw.criteria),
      column: raw.offset + 1,
    };
  }

  private operator(raw: Extract<RawCriteria, { type: 'operator' }>): Criteria {
    const { bare, withValue, criteriaPhrases } = this.language;
    const operator = raw.operator.map((w) => w.text.toLowerCase()).join(' ');
    const value = raw.value;
    if (value !== null ? withValue.has(operator) : bare.has(operator)) {
      return { kind: 'operator', operator, value: value?.text ?? null, column: raw.offset + 1 };
    }
    const lastWord = raw.operator[raw.operator.length - 1] as RawToken;
    if (value !== null && bare.has(operator)) this.unexpected(value.offset);
    if (value === null && withValue.has(operator)) this.unexpected(endOf(lastWord));
    this.strayPhrase(raw.operator, criteriaPhrases, value);
  }

  private field(raw: Extract<RawCriteria, { type: 'field' }>): Criteria {
    const policy = this.language.definition.extraFields;
    const field =
      this.language.fields.get(raw.field.text.toLowerCase()) ?? (policy?.anyName === true ? { name: raw.field.text, operators: policy.operators } : undefined);
    const column = raw.offset + 1;
    if (field === undefined) {
      throw new QuerySyntaxError(`Field not found: ${raw.field.text}`, column);
    }
    const operator = raw.operator.map((w) => w.text.toLowerCase()).join(' ');
    if (!this.language.fieldOperators.has(operator)) {
      this.strayPhrase(raw.operator, this.language.fieldPhrases, raw.value);
    }
    if (!field.operators.includes(operator)) {
      const at = (raw.operator[0] as RawToken).offset + 1;
      throw new QuerySyntaxError(`Field '${field.name}' is not applicable for operator '${operator}'`, at);
    }
    const value = raw.value;
    if (this.language.unary.has(operator)) {
      if (value !== null) this.unexpected(value.offset);
      return { kind: 'field', field: field.name, operator, value: null, column };
    }
    if (value === null) this.unexpected(endOf(raw.operator[raw.operator.length - 1] as RawToken));
    try {
      if (field.value === 'date') parseQueryDate(value.text, this.now);
      if (field.value === 'integer') parseIntegerValue(field.name, value.text);
    } catch (error) {
      if (error instanceof QuerySyntaxError) throw new QuerySyntaxError(error.message, value.offset + 1);
      throw error;
    }
    return { kind: 'field', field: field.name, operator, value: value.text, column };
  }

  orders(raw: RawQuery['orders'], orderOffset: number | null): QueryOrder[] {
    if (orderOffset !== null && this.language.sortFields.size === 0) this.unexpected(orderOffset);
    return raw.map(({ field, direction }) => {
      const name = this.language.sortFields.get(field.text.toLowerCase());
      if (name === undefined) {
        throw new QuerySyntaxError(`Can not order by field: ${field.text}`, field.offset + 1);
      }
      return { field: name, direction };
    });
  }
}

/**
 * Turns the grammar's raw tree into the public AST, checked against `language`.
 * `text` is the query (for error tokens), `now` the reference time for relative dates.
 *
 * @throws QuerySyntaxError for unknown operators, fields, sort fields and unreadable values,
 *   and for forms the language does not have (`Unexpected 'order' at column N` in a language
 *   without sort fields, fuzzy and number criteria, `fixed between`, `any … matching`).
 */
export function validateQuery(raw: RawQuery, language: CompiledLanguage, text: string, now: Date): ParsedQuery {
  const validator = new Validator(language, text, now);
  return {
    criteria: raw.criteria === null ? null : validator.criteria(raw.criteria),
    orders: validator.orders(raw.orders, raw.orderOffset),
  };
}
