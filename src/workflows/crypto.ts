// Workflows of the crypto domain (re-exported by ./index).
export { allocationWorkflow } from './allocation';
export { claimLinkWorkflow } from './claimLink';
export { chainWatcherWorkflow } from './chainWatcher';
