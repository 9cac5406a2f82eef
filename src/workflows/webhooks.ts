// Workflows of the webhooks domain (re-exported by ./index).
export {};
