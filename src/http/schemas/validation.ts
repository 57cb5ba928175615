import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import formatsPlugin from 'ajv-formats';

/** Range of an `integer` column (every id, number, count and offset): PostgreSQL's int4. */
export const INT32 = { minimum: -2_147_483_648, maximum: 2_147_483_647 } as const;
/** Range of a `bigint` column holding epoch milliseconds, as far as JavaScript numbers are exact. */
export const INT64 = { minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER } as const;

/** A path or query integer as text: optional minus, then digits only (`%201`, `0x2`, `2e0`, `+2` are not). */
const INTEGER_TEXT = /^-?[0-9]+$/;

type Schema = Record<string, unknown>;

const isPlainObject = (value: unknown): value is Schema =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && Object.getPrototypeOf(value) === Object.prototype;

const allowsInteger = (schema: Schema): boolean => schema.type === 'integer' || (Array.isArray(schema.type) && schema.type.includes('integer'));

/**
 * A copy of a schema whose every `integer` is bounded to its column's range: int32 unless the
 * schema says `format: 'int64'` (epoch-millisecond dates), so `2147483648` as an id or
 * `offset=99999999999999999999` is a 400/404 rather than a database error. Tighter bounds a
 * schema states are kept; `$id`s are dropped (no validated schema refers to one).
 */
export function boundIntegers(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(boundIntegers);
  if (!isPlainObject(schema)) return schema;
  const copy: Schema = {};
  for (const [key, value] of Object.entries(schema)) {
    // a copy must not claim the `$id` of its original: Ajv holds one schema per id
    if (key === '$id') continue;
    copy[key] = key === 'default' || key === 'const' || key === 'enum' || key === 'examples' ? value : boundIntegers(value);
  }
  if (allowsInteger(copy)) {
    const range = copy.format === 'int64' ? INT64 : INT32;
    copy.minimum = Math.max(typeof copy.minimum === 'number' ? copy.minimum : range.minimum, range.minimum);
    copy.maximum = Math.min(typeof copy.maximum === 'number' ? copy.maximum : range.maximum, range.maximum);
  }
  return copy;
}

/** Names of the properties of a params/querystring schema that read as integers. */
function integerProperties(schema: unknown): string[] {
  if (!isPlainObject(schema) || !isPlainObject(schema.properties)) return [];
  const names: string[] = [];
  for (const [name, property] of Object.entries(schema.properties)) {
    if (!isPlainObject(property)) continue;
    const items = isPlainObject(property.items) ? property.items : null;
    const variants = Array.isArray(property.anyOf) ? property.anyOf.filter(isPlainObject) : [];
    const integerOnly =
      allowsInteger(property) ||
      (items !== null && allowsInteger(items)) ||
      (variants.length > 0 && variants.some(allowsInteger) && !variants.some((v) => v.type === 'string'));
    if (integerOnly) names.push(name);
  }
  return names;
}

/** The texts of a params/querystring integer property that are not strictly digits. */
function malformedInteger(data: unknown, names: string[]): ErrorObject | null {
  if (typeof data !== 'object' || data === null) return null;
  const values = data as Record<string, unknown>;
  for (const name of names) {
    const raw = values[name];
    const texts = Array.isArray(raw) ? raw : [raw];
    for (const text of texts) {
      if (typeof text === 'string' && !INTEGER_TEXT.test(text)) {
        return { instancePath: `/${name}`, schemaPath: '#/type', keyword: 'type', params: { type: 'integer' }, message: 'must be an integer (digits only)' };
      }
    }
  }
  return null;
}

/**
 * Fastify's validator compiler: compiles on first use (compiling every route's validators at
 * start was most of the start time while a process serves a few routes). Path params and query
 * strings are coerced from text, but only text of digits reads as an integer; bodies are never
 * coerced. Every integer is bounded to its column's range ({@link boundIntegers}).
 */
export function validatorCompiler() {
  let instances: { strict: Ajv; coercing: Ajv } | undefined;
  const ajvs = () => {
    if (!instances) {
      const strict = new Ajv({ allErrors: false, removeAdditional: false, useDefaults: true, coerceTypes: false, strict: false });
      const coercing = new Ajv({ allErrors: false, removeAdditional: false, useDefaults: true, coerceTypes: 'array', strict: false });
      const addFormats = formatsPlugin as unknown as (ajv: Ajv) => void;
      addFormats(strict);
      addFormats(coercing);
      instances = { strict, coercing };
    }
    return instances;
  };
  return ({ schema, httpPart }: { schema: object; httpPart?: string }) => {
    let compiled: ValidateFunction | undefined;
    const textual = httpPart === 'params' || httpPart === 'querystring';
    const integers = textual ? integerProperties(schema) : [];
    const validate = (data: unknown): boolean => {
      const malformed = integers.length > 0 ? malformedInteger(data, integers) : null;
      if (malformed) {
        validate.errors = [malformed];
        return false;
      }
      compiled ??= (httpPart === 'body' ? ajvs().strict : ajvs().coercing).compile(boundIntegers(schema) as object);
      const valid = compiled(data) as boolean;
      validate.errors = compiled.errors;
      return valid;
    };
    validate.errors = null as ValidateFunction['errors'];
    return validate;
  };
}
