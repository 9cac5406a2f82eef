// Workflows of the webhooks domain (re-exported by ./index).
export { webhookDeliveryWorkflow } from './webhookDelivery';
export { webhookRetentionWorkflow } from './webhookRetention';
