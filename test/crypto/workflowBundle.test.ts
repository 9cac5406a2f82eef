import { bundleWorkflowCode } from '@temporalio/worker';

const quiet = { log() {}, trace() {}, debug() {}, info() {}, warn() {}, error() {} };

describe('pure crypto modules in workflow code', () => {
  it('bundle for the Temporal workflow sandbox (no Node built-ins pulled in)', async () => {
    const { code } = await bundleWorkflowCode({ workflowsPath: require.resolve('./fixtures/cryptoWorkflow'), logger: quiet as never });
    expect(code).toContain('cryptoPureModules');
    expect(code).not.toMatch(/require\(["'](node:)?crypto["']\)/);
  });
});
