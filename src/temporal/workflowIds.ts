/** Workflow ids derived from what they own, so the same thing can never run twice. Pure. */
export const workflowIds = {
  subscription: (subscriptionId: string) => `subscription-${subscriptionId}`,
  invoiceDue: (invoiceId: string) => `invoice-due-${invoiceId}`,
  webhookDelivery: (eventId: string, endpointId: string) => `webhook-${eventId}-${endpointId}`,
  claimLink: (linkId: string) => `claim-link-${linkId}`,
  allocation: (customerOrAccountKey: string) => `allocation-${customerOrAccountKey}`,
  chainWatcher: (currency: string) => `chain-watcher-${currency}`,
  reportRollup: (accountId: string, sandbox: string | null) => `report-rollup-${accountId}-${sandbox ?? 'live'}`,
};
