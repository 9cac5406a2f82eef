// Workflows of the billing domain (re-exported by ./index).
export { invoiceDueWorkflow } from './invoiceDue';
export { subscriptionWorkflow } from './subscription';
export { reportRollupWorkflow } from './reportRollup';
