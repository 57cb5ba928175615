/**
 * The door of the outbox area (docs/architecture.md#domain-areas): what other modules may use of it.
 */
export { listWebhookDeliveries, redeliverWebhook, type WebhookDelivery } from './deliveries.js';
export { enqueueEvent } from './events.js';
export { outboxLag, OutboxWorker } from './worker.js';
export { pendingMessageCount } from './queue-depth.js';
