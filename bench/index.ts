/** `npm run bench [section ...]`: every section (or those named), printed as ratios against baselines measured in the same run. */
import { connectDatabase, disconnectDatabase } from '../src/db/connection';
import { runApiBench } from './api';
import { runWebhookBench } from './webhooks';
import { runRenewalBench } from './renewals';
import { runCryptoBench } from './crypto';
import { runDetectionBench } from './detection';
import { runScaleBench } from './scale';
import { runReportsBench } from './reports';

async function main() {
  const apiUrl = `http://127.0.0.1:${process.env.PORT}`;
  const only = process.argv.slice(2);
  const want = (name: string) => !only.length || only.includes(name);
  const sections = ['api', 'renewals', 'crypto', 'detection', 'webhooks', 'reports', 'scale'];
  for (const o of only) if (!sections.includes(o)) throw new Error(`unknown bench section ${o}; one of ${sections.join(', ')}`);
  await connectDatabase(process.env.MONGODB_URI!);
  console.log(`bench on the ${process.env.BENCH_TEMPORAL_LABEL ?? 'Temporal dev server'}, ${process.env.BENCH_WORKERS ?? 1} worker process(es)`);
  try {
    if (want('api')) console.log((await runApiBench(apiUrl)).join('\n'));
    if (want('renewals')) console.log((await runRenewalBench(apiUrl)).join('\n'));
    if (want('crypto')) console.log((await runCryptoBench(apiUrl)).join('\n'));
    if (want('detection')) console.log((await runDetectionBench(apiUrl)).join('\n'));
    if (want('webhooks')) {
      console.log((await runWebhookBench({ temporalAddress: process.env.TEMPORAL_ADDRESS!, mongoUri: process.env.MONGODB_URI! })).join('\n'));
    }
    if (want('reports')) console.log((await runReportsBench(apiUrl)).join('\n'));
    // Last: its 8,000+ customers would change what the other sections measure.
    if (want('scale')) console.log((await runScaleBench(apiUrl)).join('\n'));
  } finally {
    await disconnectDatabase();
  }
}

main()
  .then(() => process.exit(0))
  .catch((err) => {
    console.error(err);
    process.exit(1);
  });
