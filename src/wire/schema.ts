import { Type, type TSchema } from '@sinclair/typebox';

/** `T | null`, written as OneDev does: the field is always present. */
export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** A date on the wire (docs/compatibility.md#platform-json). */
export const WireDate = Type.String({ description: 'ISO-8601 UTC with milliseconds, e.g. 2024-05-01T12:34:56.789+00:00' });
