/** `npm run bench [section]`: every section, printed as ratios against baselines measured in the same run. */
import { connectDatabase, disconnectDatabase } from '../src/db/connection';
import { runApiBench } from './api';
import { runWebhookBench } from './webhooks';
import { runRenewalBench } from './renewals';
import { runCryptoBench } from './crypto';
import { runDetectionBench } from './detection';

async function main() {
  const apiUrl = `http://127.0.0.1:${process.env.PORT}`;
  const only = process.argv[2];
  const want = (name: string) => !only || only === name;
  await connectDatabase(process.env.MONGODB_URI!);
  try {
    if (want('api')) console.log((await runApiBench(apiUrl)).join('\n'));
    if (want('renewals')) console.log((await runRenewalBench(apiUrl)).join('\n'));
    if (want('crypto')) console.log((await runCryptoBench(apiUrl)).join('\n'));
    if (want('detection')) console.log((await runDetectionBench(apiUrl)).join('\n'));
    if (want('webhooks')) {
      console.log((await runWebhookBench({ temporalAddress: process.env.TEMPORAL_ADDRESS!, mongoUri: process.env.MONGODB_URI! })).join('\n'));
    }
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
