import { Type, type Static, type TObject, type TProperties, type TSchema } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Context } from '../domain/context.js';
import { textBody } from '../plugins/bodies.js';
import { page, PageQuery, TextBody } from './schemas/common.js';

/**
 * Route builders shared by the resource modules: a collection's query, an item's child lists and
 * an item's actions, each with one implementation of the HTTP conventions
 * (docs/compatibility.md#gitloom-differs-json, docs/compatibility.md#gitloom-differs-success-responses).
 */

/** The instance a route module registers its routes on (the `/~api` scope, TypeBox-typed). */
export type ApiApp = Parameters<FastifyPluginAsyncTypebox>[0];

/** An item of a collection, e.g. `{ path: '/issues', idParam: 'issueId', tags: ['Issue'] }`: routes below it take its integer id. */
export interface ItemParent {
  /** Collection path under `/~api`. */
  path: string;
  /** Name of the id path parameter. */
  idParam: string;
  /** OpenAPI tags. */
  tags: string[];
}

/** The integer id path parameter of `parent`'s items. */
export function itemParams(parent: ItemParent) {
  return Type.Object({ [parent.idParam]: Type.Integer() });
}

/** The id of the item a request addresses. */
export function itemId(parent: ItemParent, request: { params: unknown }): number {
  return (request.params as Record<string, number>)[parent.idParam];
}

/** Registers `GET <parent.path>/:<parent.idParam>`: the item read by `get` (which throws the domain's errors, e.g. not found) as wire JSON. */
export function itemGetRoute<Row>(
  app: ApiApp,
  parent: ItemParent,
  summary: string,
  schema: TSchema,
  get: (ctx: Context, id: number) => Promise<Row>,
  toWire: (row: Row) => unknown,
): void {
  app.get(
    `${parent.path}/:${parent.idParam}`,
    { schema: { tags: parent.tags, summary, params: itemParams(parent), response: { 200: schema } } },
    async (request) => toWire(await get(request.ctx, itemId(parent, request))),
  );
}

/** Registers `DELETE <parent.path>/:<parent.idParam>` (`Delete`), answered by an empty `200`; throws what `remove` throws. */
export function itemDeleteRoute(app: ApiApp, parent: ItemParent, remove: (ctx: Context, id: number) => Promise<void>): void {
  app.delete(`${parent.path}/:${parent.idParam}`, { schema: { tags: parent.tags, summary: 'Delete', params: itemParams(parent) } }, async (request) => {
    await remove(request.ctx, itemId(parent, request));
    return '';
  });
}

/** A collection's query (GET on the collection; docs/compatibility.md#platform-pagination, docs/compatibility.md#gitloom-differs-pagination-and-query-parameters): its filters and the lookup. */
export interface CollectionQuery<P extends TProperties, Row> {
  path: string;
  tags: string[];
  /** OpenAPI summary, e.g. `Query Basic Info`. */
  summary: string;
  /** The filters; `offset` and `count` are added. */
  params: P;
  /** Wire schema of one element. */
  schema: TSchema;
  /** The page `offset`/`count` of the rows matching the filters; throws what the domain query throws (e.g. a malformed query). */
  run(ctx: Context, params: Static<TObject<P>>, offset: number, count: number): Promise<Row[]>;
  toWire(row: Row): unknown;
}

/** Registers `GET <query.path>?<filters>&offset&count`, answering the page of matching rows as a wire JSON array. */
export function queryRoute<P extends TProperties, Row>(app: ApiApp, query: CollectionQuery<P, Row>): void {
  app.get(
    query.path,
    {
      schema: {
        tags: query.tags,
        summary: query.summary,
        querystring: Type.Object({ ...query.params, ...PageQuery }),
        response: { 200: Type.Array(query.schema) },
      },
    },
    async (request) => {
      const { offset, count } = page(request.query as { offset?: number; count?: number });
      const rows = await query.run(request.ctx, request.query as Static<TObject<P>>, offset, count);
      return rows.map((row) => query.toWire(row));
    },
  );
}

/**
 * Registers `GET <path>?query&offset&count` (`Query Basic Info`) of a collection searched with the
 * query language (docs/compatibility.md#issues-query-language, docs/compatibility.md#pull-requests-query-language,
 * docs/compatibility.md#builds-query-language, docs/compatibility.md#projects-query-language): an absent `query` is the
 * empty query, which matches all.
 */
export function basicInfoQueryRoute<Row>(
  app: ApiApp,
  path: string,
  tags: string[],
  schema: TSchema,
  search: (ctx: Context, query: string, offset: number, count: number) => Promise<Row[]>,
  toWire: (row: Row) => unknown,
): void {
  queryRoute(app, {
    path,
    tags,
    summary: 'Query Basic Info',
    params: { query: Type.Optional(Type.String()) },
    schema,
    run: (ctx, params, offset, count) => search(ctx, params.query ?? '', offset, count),
    toWire,
  });
}

/** One list of an item's children, answered by `GET <parent>/{id}/<path>` as a JSON array. */
export interface ChildList {
  /** Path below the item, e.g. `fields`. */
  path: string;
  /** OpenAPI summary, e.g. `Get Fields`. */
  summary: string;
  /** Wire schema of one element. */
  schema: TSchema;
  /** The wire elements of item `id`'s list; throws what the domain lookup throws. */
  read(ctx: Context, id: number): Promise<unknown[]>;
}

/**
 * A child list read by `list` (which throws the domain's errors, e.g. an unknown or unreadable
 * item) and turned to wire JSON row by row through `toWire`, or answered as read when the rows
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
 * Registers the child lists of `parent`'s items, in the given order: `GET <parent.path>/:<parent.idParam>/<list.path>`
 * with a `200` array response. The item's errors (not found, not readable) are the lists' own.
 */
export function childListRoutes(app: ApiApp, parent: ItemParent, lists: ChildList[]): void {
  const params = itemParams(parent);
  for (const list of lists) {
    app.get(
      `${parent.path}/:${parent.idParam}/${list.path}`,
      { schema: { tags: parent.tags, summary: list.summary, params, response: { 200: Type.Array(list.schema) } } },
      async (request) => list.read(request.ctx, itemId(parent, request)),
    );
  }
}

/** One action on an item: `POST <parent>/{id}/<path>` with a body, answered by an empty `200`. */
export interface ItemAction {
  /** Path below the item, e.g. `title`. */
  path: string;
  /** OpenAPI summary, e.g. `Set Title`. */
  summary: string;
  /** `text` for a `text/plain` body (docs/compatibility.md#gitloom-differs-mount-and-media-types), else the JSON body's schema. */
  body: TSchema | 'text';
  /** Runs the action on item `id` with the body (its text for a `text/plain` body); throws what the domain throws. */
  run(ctx: Context, id: number, body: unknown): Promise<void>;
}

/** An action taking a `text/plain` body: a title, a description, a password, a merge commit message, …. */
export function textAction(path: string, summary: string, run: (ctx: Context, id: number, text: string) => Promise<void>): ItemAction {
  return { path, summary, body: 'text', run: (ctx, id, body) => run(ctx, id, textBody(body)) };
}

/** An action taking a JSON body of schema `body` (validated before `run` sees it). */
export function jsonAction<S extends TSchema>(
  path: string,
  summary: string,
  body: S,
  run: (ctx: Context, id: number, value: Static<S>) => Promise<void>,
): ItemAction {
  return { path, summary, body, run: (ctx, id, value) => run(ctx, id, value as Static<S>) };
}

/** Registers the actions on `parent`'s items, in the given order: `POST <parent.path>/:<parent.idParam>/<action.path>`, answered by an empty `200`. */
export function itemActionRoutes(app: ApiApp, parent: ItemParent, actions: ItemAction[]): void {
  const params = itemParams(parent);
  for (const action of actions) {
    const schema = { tags: parent.tags, summary: action.summary, params, body: action.body === 'text' ? TextBody : action.body };
    app.post(
      `${parent.path}/:${parent.idParam}/${action.path}`,
      action.body === 'text' ? { config: { textBody: true }, schema } : { schema },
      async (request) => {
        await action.run(request.ctx, itemId(parent, request), request.body);
        return '';
      },
    );
  }
}
