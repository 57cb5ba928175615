import { Type, type Static, type TObject, type TProperties, type TSchema } from '@sinclair/typebox';
import type { FastifyPluginAsync } from 'fastify';
import type { Context } from '../domain/context.js';
import { CreatedId, page, PageQuery } from './schemas/common.js';

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
  /** Create body (`additionalProperties: false`; an `id` is therefore refused). */
  createBody: Create;
  /** Update body: the partial-merge shape (every field optional). */
  updateBody: Update;
  get(ctx: Context, id: number): Promise<Row>;
  /** Returns the new id. */
  create(ctx: Context, body: Static<Create>): Promise<number>;
  /** Partial merge onto the stored entity. Returns the id when OneDev answers with it. */
  update(ctx: Context, id: number, body: Static<Update>): Promise<number | void>;
  delete(ctx: Context, id: number): Promise<void>;
  /** Query (GET on the collection) for resources that have it: extra query params and the lookup. */
  query?: {
    params: TProperties;
    run(ctx: Context, params: Record<string, unknown>, offset: number, count: number): Promise<Row[]>;
  };
}

/** Builds the routes of standard resources: Get, Create, Update, Delete and optional Query. */
export function crudRoutes(resources: CrudResource<any, TObject, TObject>[]): FastifyPluginAsync {
  return async (app) => {
    for (const resource of resources) {
      const tags = [resource.tag];
      const params = Type.Object({ [resource.idParam]: Type.Integer() });
      const item = `${resource.collection}/:${resource.idParam}`;
      const idOf = (request: { params: unknown }) => (request.params as Record<string, number>)[resource.idParam];

      app.get(item, { schema: { tags, summary: 'Get', params, response: { 200: resource.schema } } }, async (request) =>
        resource.toWire(await resource.get(request.ctx, idOf(request))),
      );

      app.post(resource.collection, { schema: { tags, summary: 'Create', body: resource.createBody, response: { 200: CreatedId } } }, async (request) =>
        resource.create(request.ctx, request.body as never),
      );

      app.post(item, { schema: { tags, summary: 'Update', params, body: resource.updateBody } }, async (request) => {
        const id = await resource.update(request.ctx, idOf(request), request.body as never);
        return id === undefined ? '' : id;
      });

      app.delete(item, { schema: { tags, summary: 'Delete', params } }, async (request) => {
        await resource.delete(request.ctx, idOf(request));
        return '';
      });

      const query = resource.query;
      if (query) {
        app.get(
          resource.collection,
          {
            schema: { tags, summary: 'Query', querystring: Type.Object({ ...query.params, ...PageQuery }), response: { 200: Type.Array(resource.schema) } },
          },
          async (request) => {
            const { offset, count } = page(request.query as { offset?: number; count?: number });
            const rows = await query.run(request.ctx, request.query as Record<string, unknown>, offset, count);
            return rows.map((row) => resource.toWire(row));
          },
        );
      }
    }
  };
}
