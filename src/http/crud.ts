import { Type, type Static, type TObject, type TProperties, type TSchema } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Context } from '../domain/context.js';
import { itemDeleteRoute, itemGetRoute, itemId, itemParams, queryRoute } from './resource-routes.js';
import { CreatedId } from './schemas/common.js';

/**
 * One standard create/read/update/delete resource (the generic resources of the API: roles, groups, memberships, authorizations, label specs, milestones, personalizations, watches, …): its wire schema, body schemas
 * and domain operations. The factory below turns a list of these into routes, so the plain
 * resources (roles, authorizations, milestones, watches, comments, personalizations, …) share
 * one implementation of the HTTP conventions (docs/compatibility.md#gitloom-differs-mount-and-media-types, docs/compatibility.md#gitloom-differs-json, docs/compatibility.md#gitloom-differs-success-responses).
 */
export interface CrudResource<Row, Create extends TObject, Update extends TObject> {
  /** OpenAPI tag, e.g. `Role`. */
  tag: string;
  /** Collection path under `/~api`, e.g. `/roles`. */
  collection: string;
  /** Name of the id path parameter, e.g. `roleId`. */
  idParam: string;
  /** Wire schema of one entity (fields in OneDev's order). */
  schema: TSchema;
  /** Row → wire JSON. */
  toWire(row: Row): unknown;
  /** Get (GET on an item); absent for resources without it. */
  get?(ctx: Context, id: number): Promise<Row>;
  /** Create (POST on the collection): the body (`additionalProperties: false`; an `id` is therefore refused) and the operation, which returns the new id. */
  create?: { body: Create; run(ctx: Context, body: Static<Create>): Promise<number> };
  /** Update (POST on an item): the partial-merge body (every field optional) merged onto the stored entity; returns the id when OneDev answers with it. */
  update?: { body: Update; run(ctx: Context, id: number, body: Static<Update>): Promise<number | void> };
  /** Delete (DELETE on an item). */
  delete?(ctx: Context, id: number): Promise<void>;
  /** Query (GET on the collection) for resources that have it: extra query params and the lookup. */
  query?: {
    params: TProperties;
    run(ctx: Context, params: Record<string, unknown>, offset: number, count: number): Promise<Row[]>;
  };
}

/** The Query of resources filtered by an optional `name` (roles, groups, label specs; docs/compatibility.md#roles, docs/compatibility.md#groups-and-memberships). */
export function nameQuery<Row>(
  search: (ctx: Context, name: string | undefined, offset: number, count: number) => Promise<Row[]>,
): NonNullable<CrudResource<Row, TObject, TObject>['query']> {
  return { params: { name: Type.Optional(Type.String()) }, run: (ctx, params, offset, count) => search(ctx, params.name as string | undefined, offset, count) };
}

/** Builds the routes of standard resources: those of Get, Create, Update, Delete and Query that each resource has, in that order. */
export function crudRoutes(resources: CrudResource<any, TObject, TObject>[]): FastifyPluginAsyncTypebox {
  return async (app) => {
    for (const resource of resources) {
      const tags = [resource.tag];
      const parent = { path: resource.collection, idParam: resource.idParam, tags };
      const { get, create, update, delete: remove } = resource;
      if (get) itemGetRoute(app, parent, 'Get', resource.schema, get, resource.toWire);

      if (create) {
        app.post(resource.collection, { schema: { tags, summary: 'Create', body: create.body, response: { 200: CreatedId } } }, async (request) =>
          create.run(request.ctx, request.body as never),
        );
      }

      if (update) {
        app.post(
          `${resource.collection}/:${resource.idParam}`,
          { schema: { tags, summary: 'Update', params: itemParams(parent), body: update.body } },
          async (request) => {
            const id = await update.run(request.ctx, itemId(parent, request), request.body as never);
            return id === undefined ? '' : id;
          },
        );
      }

      if (remove) itemDeleteRoute(app, parent, remove);

      if (resource.query) {
        queryRoute(app, { path: resource.collection, tags, summary: 'Query', schema: resource.schema, toWire: resource.toWire, ...resource.query });
      }
    }
  };
}
