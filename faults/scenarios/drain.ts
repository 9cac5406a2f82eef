/**
 * Scenario 6: SIGTERM to the API with requests in flight. Every request sent before the signal
 * finishes with its normal answer (graceful drain, bounded by DRAIN_TIMEOUT_MS); connections
 * opened after the listener closed are refused; nothing written is lost. Some request must have
 * been in the API's hands when the signal came, or the scenario fails.
 */
import { readFileSync } from 'node:fs';
import { Customer } from '../../src/models/customer';
import { ScenarioContext, ScenarioResult, seconds, startScenarioApp } from '../scenario';
import { sleep } from '../stack';

export async function apiRestartWithRequestsInFlight(ctx: ScenarioContext, opts: { requests: number }): Promise<ScenarioResult> {
  const app = await startScenarioApp(ctx, 'drain');
  try {
    // The request id comes back in the API's log line of the request (src/api/middleware/requestLog.ts).
    const post = (i: number) =>
      fetch(`${app.apiUrl}/v1/customers`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${app.token}`, 'Content-Type': 'application/json', 'X-Request-Id': `drain-${i}` },
        body: JSON.stringify({ email: `drain${i}@faults.example.com` }),
      }).then(
        async (r) => ({ id: `drain-${i}`, status: r.status, body: await r.text(), connection: r.headers.get('connection') }),
        (err: Error) => ({ id: `drain-${i}`, status: 0, body: String(err.cause ?? err), connection: null }),
      );
    // All sent at once; the signal lands while most are still being processed.
    const inFlight = Array.from({ length: opts.requests }, (_, i) => post(i));
    await sleep(30);
    const signalled = Date.now();
    const exited = app.api.stop('SIGTERM');
    const answers = await Promise.all(inFlight);
    const code = await exited;
    const drainSeconds = seconds(signalled);
    // The listener is closed now: a new connection is refused, not left hanging.
    const after = await post(opts.requests);
    const refused = after.status === 0 && /ECONNREFUSED/.test(after.body);

    // In flight at the signal: received before it (the API adds `Connection: close` to the answers
    // of requests that arrive while it drains) and finished after it (logged after the API's
    // "api stopping" line). Both orders are the API's own, not this process's clock.
    const log = readFileSync(app.api.spec.log, 'utf8').split('\n');
    let stopLine = -1;
    log.forEach((l, i) => {
      if (l.includes('"api stopping')) stopLine = i;
    });
    const finishedAfter = new Set(
      log.slice(stopLine + 1).flatMap((l) => {
        try {
          return [(JSON.parse(l) as { requestId?: string }).requestId ?? ''];
        } catch {
          return [];
        }
      }),
    );
    const inFlightAtSignal = stopLine < 0 ? 0 : answers.filter((a) => a.status !== 0 && a.connection !== 'close' && finishedAfter.has(a.id)).length;

    const ok = answers.filter((a) => a.status === 201).length;
    const stored = await Customer.countDocuments({ account_id: app.accountId });
    const restartedAt = Date.now();
    await app.api.start();
    const recovered = seconds(restartedAt);
    return {
      name: 'api-sigterm-with-requests-in-flight',
      operations: opts.requests,
      // A request that was in flight and did not get its answer, or an answered write that is not stored.
      lost: opts.requests - ok + Math.max(0, ok - stored) + (refused ? 0 : 1) + (code === 0 ? 0 : 1),
      doubled: Math.max(0, stored - opts.requests),
      recoveredSeconds: recovered,
      details: [
        `${ok}/${opts.requests} in-flight requests answered 201 (${answers.filter((a) => a.status !== 201).map((a) => `${a.status} ${a.body.slice(0, 80)}`).slice(0, 3).join('; ') || 'no other answers'}), ${stored} customers stored`,
        `drained and exited (code ${code}) ${drainSeconds.toFixed(2)} s after SIGTERM; a new connection afterwards: ${refused ? 'refused' : `NOT refused (${after.status} ${after.body.slice(0, 80)})`}`,
        `${inFlightAtSignal} requests in flight at SIGTERM (received before it, finished after), ${answers.filter((a) => a.connection === 'close').length} received while draining`,
      ],
      inProgressAtFault: inFlightAtSignal,
    };
  } finally {
    await app.close();
  }
}
