/**
 * API section: authenticated reads/writes/lists of the running service against a bare Koa
 * route that reads one document with the raw driver (same database, same machine, same run).
 */
import Koa from 'koa';
import mongoose from 'mongoose';
import type { Server } from 'node:http';
import { createAccount } from '../src/services/accounts/accounts';
import { Customer } from '../src/models/customer';
import { newId, ID_PREFIX } from '../src/lib/ids';
import { assignListSlots, recountListSlots } from '../src/services/writes/listing';
import { measure, Measured, row, target } from './support';
import { cpuLine, withCpu, CpuWindow } from './cpu';

export async function runApiBench(apiUrl: string): Promise<string[]> {
  const account = await createAccount({ email: `bench-${Date.now()}@example.com`, password: 'bench-password' });
  const auth = { Authorization: `Bearer ${account.token}` };

  // 10,000 customers, written straight to the collection (seeding is not what is measured), in
  // the account's list as creates put them (slots in creation order, oldest first).
  const now = Date.now();
  const { slots, sealed } = await assignListSlots(Customer, { accountId: account.account_id, sandbox: null }, 10_000);
  const docs = Array.from({ length: 10_000 }, (_, i) => ({
    _id: newId(ID_PREFIX.customer),
    account_id: account.account_id,
    sandbox: null,
    email: `seed${i}@bench.io`,
    first_name: 'Seed',
    last_name: String(i),
    created_at: new Date(now - (10_000 - i) * 1000),
    updated_at: new Date(now - (10_000 - i) * 1000),
    ...slots[i],
  }));
  for (let i = 0; i < docs.length; i += 1000) await Customer.collection.insertMany(docs.slice(i, i + 1000) as any[]);
  await recountListSlots(Customer, [...slots, ...sealed]);
  const targetId = docs[5000]._id;

  const bare = new Koa();
  const raw = mongoose.connection.db!.collection('customers');
  bare.use(async (ctx) => {
    ctx.body = await raw.findOne({ _id: targetId as any });
  });
  const server: Server = await new Promise((r) => {
    const s = bare.listen(0, '127.0.0.1', () => r(s));
  });
  const bareUrl = `http://127.0.0.1:${(server.address() as { port: number }).port}`;

  try {
    // Each run's CPU, every process of the stack and the bench (autocannon) counted, per request.
    const cpuOf = new Map<Measured, { cpu: CpuWindow; seconds: number }>();
    const measured = async (name: string, opts: Parameters<typeof measure>[1]) => {
      const { result, cpu, seconds } = await withCpu(() => measure(name, opts));
      cpuOf.set(result, { cpu, seconds });
      return result;
    };
    const cpuPerRequest = (m: Measured) => (cpuOf.get(m)!.cpu.total * 1000) / Math.max(1, m.requests);
    const baseline = await measured('bare Koa + raw driver findOne', { url: `${bareUrl}/` });
    const get = await measured('GET /v1/customers/:id (authenticated)', { url: `${apiUrl}/v1/customers/${targetId}`, headers: auth });
    let n = 0;
    const post = await measured('POST /v1/customers', {
      url: `${apiUrl}/v1/customers`,
      method: 'POST',
      headers: { ...auth, 'Content-Type': 'application/json' },
      requests: [{ setupRequest: (req: any) => ({ ...req, body: JSON.stringify({ email: `new${n++}-${now}@bench.io` }) }) }],
    });
    // One connection: each list page scans the collection on FerretDB v1, so more would only queue.
    // The POSTs above added customers: the last page is read from the list, not assumed to be 400.
    const listed = await fetch(`${apiUrl}/v1/customers?page=1`, { headers: auth });
    if (!listed.ok) throw new Error(`GET /v1/customers answered ${listed.status}`);
    const { pagination } = (await listed.json()) as { pagination: { pages: number; count: number } };
    const first = await measured(`GET /v1/customers?page=1 (${pagination.count} customers)`, { url: `${apiUrl}/v1/customers?page=1`, headers: auth, connections: 1, duration: 8 });
    const last = await measured(`GET /v1/customers?page=${pagination.pages} (last page)`, { url: `${apiUrl}/v1/customers?page=${pagination.pages}`, headers: auth, connections: 1, duration: 8 });
    const getRatio = get.rps / baseline.rps;
    const pageRatio = last.p50 / Math.max(first.p50, 0.001);
    return [
      '== API (10,000 customers) ==',
      row(baseline),
      row(get, baseline),
      row(post, baseline),
      row(first, baseline),
      row(last, baseline),
      ...[baseline, get, post, first, last].map((m) => `  cpu per request, ${m.name}: ${cpuPerRequest(m).toFixed(2)} ms = x${(cpuPerRequest(m) / cpuPerRequest(baseline)).toFixed(1)} of the baseline's`),
      cpuLine(`${get.name}`, cpuOf.get(get)!.cpu, cpuOf.get(get)!.seconds),
      `authenticated GET throughput / baseline: ${getRatio.toFixed(2)} (target >= 0.5)`,
      `last page p50 / first page p50: ${pageRatio.toFixed(2)} (target <= 2)`,
      target('api', 'get-throughput-vs-baseline', `x${getRatio.toFixed(2)} (${get.rps.toFixed(0)} vs ${baseline.rps.toFixed(0)} req/s)`, '>= x0.5', getRatio >= 0.5),
      target('api', 'last-page-vs-first-page-p50', `x${pageRatio.toFixed(2)} (${first.p50.toFixed(1)} -> ${last.p50.toFixed(1)} ms)`, '<= x2', pageRatio <= 2),
    ];
  } finally {
    server.close();
  }
}
