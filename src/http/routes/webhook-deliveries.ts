import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { listWebhookDeliveries, redeliverWebhook } from '../../domain/outbox/index.js';
import { toWireWebhookDelivery, WebhookDeliverySchema } from '../../wire/webhooks.js';
import { CreatedId, page, PageQuery } from '../schemas/common.js';

const tags = ['Webhook Delivery'];

/**
 * Webhook deliveries (docs/compatibility.md#gitloom-differs-webhooks-and-notifications): the list of a project's deliveries with their attempts,
 * and redelivery. Both need the manage-project privilege.
 */
export const webhookDeliveryRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/projects/:projectId/webhook-deliveries',
    {
      schema: {
        tags,
        summary: 'Get Webhook Deliveries',
        description: "Deliveries of the project's webhooks, newest first, each with every attempt.",
        params: Type.Object({ projectId: Type.Integer() }),
        querystring: Type.Object(PageQuery),
        response: { 200: Type.Array(WebhookDeliverySchema) },
      },
    },
    async (request) => {
      const { offset, count } = page(request.query);
      return (await listWebhookDeliveries(request.ctx, request.params.projectId, offset, count)).map(toWireWebhookDelivery);
    },
  );

  app.post(
    '/webhook-deliveries/:deliveryId/redeliver',
    {
      schema: {
        tags,
        summary: 'Redeliver Webhook Delivery',
        description: 'Queues a new delivery (new X-Gitloom-Delivery id) of the same body to the same URL; returns its id.',
        params: Type.Object({ deliveryId: Type.Integer() }),
        response: { 200: CreatedId },
      },
    },
    async (request) => redeliverWebhook(request.ctx, request.params.deliveryId),
  );
};
