/** `npm run bench`: every section, printed as ratios against baselines measured in the same run. */
import { connectDatabase, disconnectDatabase } from '../src/db/connection';
import { runApiBench } from './api';

async function main() {
  const apiUrl = `http://127.0.0.1:${process.env.PORT}`;
  await connectDatabase(process.env.MONGODB_URI!);
  const only = process.argv[2];
  const lines: string[] = [];
  try {
    if (!only || only === 'api') lines.push(...(await runApiBench(apiUrl)));
  } finally {
    await disconnectDatabase();
  }
  console.log(lines.join('\n'));
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
