// Every workflow type the worker runs. Workflows import only pure modules and shared definitions.
export * from './billing';
export * from './crypto';
export * from './webhooks';
