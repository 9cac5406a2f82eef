/**
 * Scenario 5: `kill -9` the database server (FerretDB) during writes, then start it again.
 * Requests during the outage answer 503 with a clear error, promptly (no hang, no crash);
 * requests retried with the same Idempotency-Key apply once; nothing acknowledged is lost.
 */
import { randomUUID } from 'node:crypto';
import { Customer } from '../../src/models/customer';
import { pool } from '../client';
import { ScenarioContext, ScenarioResult, seconds, startScenarioApp } from '../scenario';
import { ManagedProcess, sleep, waitUntil } from '../stack';

interface Write {
  key: string;
  email: string;
  first: number | 'connection';
  /** The answer that settled it: 201, or 422 email taken when an earlier attempt had in fact stored it. */
  final: number | null;
  finalCode?: string;
}

export async function databaseKill(ctx: ScenarioContext, ferretdb: ManagedProcess, opts: { writes: number }): Promise<ScenarioResult> {
  const app = await startScenarioApp(ctx, 'database_kill');
  try {
    const send = async (w: Write) => {
      const started = Date.now();
      try {
        const res = await fetch(`${app.apiUrl}/v1/customers`, {
          method: 'POST',
          headers: { Authorization: `Bearer ${app.token}`, 'Content-Type': 'application/json', 'Idempotency-Key': w.key },
          body: JSON.stringify({ email: w.email }),
          signal: AbortSignal.timeout(60_000),
        });
        const body = (await res.json().catch(() => null)) as any;
        return { status: res.status, code: body?.error?.code as string | undefined, ms: Date.now() - started };
      } catch {
        return { status: 'connection' as const, code: undefined, ms: Date.now() - started };
      }
    };
    const writes: Write[] = Array.from({ length: opts.writes }, (_, i) => ({ key: randomUUID(), email: `dbkill${i}@faults.example.com`, first: 0, final: null }));
    const outageAnswers: { status: number | 'connection'; code?: string; ms: number }[] = [];
    let killedAt = 0;
    let restartedAt = 0;
    ctx.progress(`database-kill: ${opts.writes} writes; FerretDB killed a third of the way in and started again 5 s later`);
    let outage: Promise<void> | null = null;
    let sent = 0;
    // Four clients at a time; FerretDB is killed when a third of the writes have been sent and
    // started again 5 s later, while the clients keep sending.
    await pool(writes, 4, async (w) => {
      sent += 1;
      if (!outage && sent > writes.length / 3) {
        outage = (async () => {
          await ferretdb.kill9();
          killedAt = Date.now();
          await sleep(5_000);
          await ferretdb.start();
          restartedAt = Date.now();
        })();
        while (!killedAt) await sleep(10);
      }
      const during = killedAt > 0 && restartedAt === 0;
      const r = await send(w);
      w.first = r.status;
      if (during) outageAnswers.push(r);
      if (r.status === 201) w.final = 201;
    });
    await outage;
    // Every write not acknowledged is retried with its own key until it lands.
    // Every write not acknowledged is retried with its own key until it is settled: a 201, or a
    // 422 "email taken" when the attempt that answered 503 had in fact committed (the server
    // died between its commit and its answer; without multi-document transactions the key cannot
    // be completed with the write). Either way the customer must exist exactly once.
    await waitUntil('every write retried until settled', async () => {
      for (const w of writes.filter((x) => x.final === null)) {
        const r = await send(w);
        if (r.status === 201 || (r.status === 422 && typeof r.code === 'string')) {
          w.final = r.status;
          w.finalCode = r.code;
        }
      }
      return writes.every((w) => w.final !== null);
    }, 180_000, 1_000);
    const recovered = seconds(restartedAt);

    const stored = await Customer.find({ account_id: app.accountId }, { email: 1 }).lean<{ email: string }[]>();
    const byEmail = new Map<string, number>();
    for (const c of stored) byEmail.set(c.email, (byEmail.get(c.email) ?? 0) + 1);
    const lost = writes.filter((w) => !byEmail.has(w.email)).length;
    const doubled = [...byEmail.values()].reduce((n, k) => n + Math.max(0, k - 1), 0);
    // Sent while the database was down: a prompt 503, or a 201 when it came back in time.
    const unclear = outageAnswers.filter((a) => a.status !== 201 && (a.status !== 503 || a.code !== 'service_unavailable'));
    const slowest = Math.max(0, ...outageAnswers.map((a) => a.ms));
    return {
      name: 'database-killed-during-writes',
      operations: writes.length,
      // An answer during the outage other than a prompt 503 counts as a failure of the scenario too.
      lost: lost + unclear.length,
      doubled,
      recoveredSeconds: recovered,
      details: [
        `${outageAnswers.length} requests sent during the outage: ${outageAnswers.filter((a) => a.status === 503).length} answered 503 service_unavailable, ${outageAnswers.filter((a) => a.status === 201).length} 201 once it was back; slowest ${slowest} ms${unclear.length ? `; others: ${unclear.map((a) => `${a.status} ${a.code ?? ''}`).slice(0, 5).join(', ')}` : ''}`,
        `${writes.filter((w) => w.first === 201).length} acknowledged at once, ${writes.filter((w) => w.first !== 201).length} retried with their key (${writes.filter((w) => w.first !== 201 && w.final === 201).length} then 201, ${writes.filter((w) => w.final === 422).length} found their write already stored: 422 ${[...new Set(writes.filter((w) => w.final === 422).map((w) => w.finalCode))].join(', ') || '-'}); ${stored.length} customers stored for ${writes.length} emails`,
      ],
      // Requests sent while FerretDB was down: none would leave the outage's answers untested.
      inProgressAtFault: outageAnswers.length,
    };
  } finally {
    if (!ferretdb.running) await ferretdb.start();
    await app.close();
  }
}
