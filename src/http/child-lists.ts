import { Type, type TSchema } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Context } from '../domain/context.js';

/** The instance a route module registers its routes on (the `/~api` scope, TypeBox-typed). */
export type ApiApp = Parameters<FastifyPluginAsyncTypebox>[0];

/** One list of an entity's children, answered by `GET <parent>/{id}/<path>` as a JSON array. */
export interface ChildList {
  /** Path below the parent item, e.g. `fields`. */
  path: string;
  /** OpenAPI summary, e.g. `Get Fields`. */
  summary: string;
  /** Wire schema of one element. */
  schema: TSchema;
  /** The wire elements of the parent `id`'s list; throws what the domain lookup throws. */
  read(ctx: Context, id: number): Promise<unknown[]>;
}

/**
 * A child list read by `list` (which throws the domain's errors, e.g. an unknown or unreadable
 * parent) and turned to wire JSON row by row through `toWire`, or answered as read when the rows
 * are already wire values.
 */
export function childList<Row>(
  path: string,
  summary: string,
  schema: TSchema,
  list: (ctx: Context, id: number) => Promise<Row[]>,
  toWire?: (row: Row) => unknown,
): ChildList {
  return {
    path,
    summary,
    schema,
    read: async (ctx, id) => {
      const rows = await list(ctx, id);
      return toWire ? rows.map(toWire) : rows;
    },
  };
}

/**
 * Registers the child lists of one parent resource, in the given order: `GET <parent.path>/:<parent.idParam>/<list.path>`
 * with an integer id path parameter and a `200` array response (docs/compatibility.md#gitloom-differs-json,
 * docs/compatibility.md#gitloom-differs-success-responses). The parent's errors (not found, not readable) are the lists' own.
 */
export function childListRoutes(app: ApiApp, parent: { path: string; idParam: string; tags: string[] }, lists: ChildList[]): void {
  const params = Type.Object({ [parent.idParam]: Type.Integer() });
  for (const list of lists) {
    app.get(
      `${parent.path}/:${parent.idParam}/${list.path}`,
      { schema: { tags: parent.tags, summary: list.summary, params, response: { 200: Type.Array(list.schema) } } },
      async (request) => list.read(request.ctx, (request.params as Record<string, number>)[parent.idParam]),
    );
  }
}
