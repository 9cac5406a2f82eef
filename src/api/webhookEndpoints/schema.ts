import { compile } from '../validation';
import type { WebhookEndpointInput } from '../../services/webhooks/webhookEndpoints';

// Shapes only; event names and the URL rules are checked by the service (422 naming the field).
const properties = {
  url: { type: 'string', maxLength: 2048 },
  subscriptions: { type: 'array', minItems: 1, maxItems: 100, items: { type: 'string', maxLength: 100 } },
  enabled: { type: 'boolean' },
  description: { type: ['string', 'null'], maxLength: 5000 },
};

export const createWebhookEndpointBody = compile<WebhookEndpointInput & { url: string; subscriptions: string[] }>({
  type: 'object',
  required: ['url', 'subscriptions'],
  properties,
});

export const updateWebhookEndpointBody = compile<WebhookEndpointInput>({ type: 'object', properties });
