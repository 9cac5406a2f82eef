/**
 * The client half of scripts/deno-goaway.sh: calls Temporal's GetSystemInfo three times every
 * 0.5 s for SECONDS (30) on one connection of TRANSPORT (grpc-js: the SDK's Connection over node:http2;
 * native: its NativeConnection), then prints "survived". Runs on Node (tsx) and Deno.
 */
import { Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';

async function main() {
  const address = process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233';
  const transport = process.env.TRANSPORT ?? 'grpc-js';
  const seconds = Number(process.env.SECONDS ?? 30);
  const conn = transport === 'native' ? await NativeConnection.connect({ address }) : await Connection.connect({ address });
  const t0 = Date.now();
  let calls = 0;
  while (Date.now() - t0 < seconds * 1000) {
    for (let i = 0; i < 3; i++) await conn.workflowService.getSystemInfo({});
    calls += 3;
    if (calls % 30 === 0) console.log(`${((Date.now() - t0) / 1000).toFixed(1)} s: ${calls} calls`);
    await new Promise((r) => setTimeout(r, 500));
  }
  await conn.close();
  console.log(`survived: ${calls} calls in ${seconds} s`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
