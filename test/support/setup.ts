// Quiet the Temporal SDK's own logging in tests (warnings and errors still show).
import { DefaultLogger, Runtime } from '@temporalio/worker';

try {
  Runtime.install({ logger: new DefaultLogger('WARN') });
} catch {
  // Already installed in this worker process.
}
